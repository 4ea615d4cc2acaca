// A count-window store in Node.js over ioredis: the last N messages of each session in one Redis list,
// pushed, trimmed and given its TTL in one MULTI/EXEC. Its Python twin: examples/stores/count_window.py.
//
//   memory-regression --store examples/stores/node/count_window.mjs:CountWindowStore
import Redis from 'ioredis';

export class CountWindowStore {
  constructor(redisUrl, maxMessages, ttl = undefined, namespace = 'chat:') {
    if (maxMessages < 1) throw new RangeError('maxMessages must be at least 1');
    this.redis = this.connect(redisUrl);
    this.maxMessages = maxMessages;
    this.ttl = ttl;
    this.namespace = namespace;
  }

  // One server's client. On a Redis Cluster (--redis cluster) it would be told MOVED: connect with
  // new Redis.Cluster([redisUrl], ...) there (tests/stores/node/cluster.mjs).
  connect(redisUrl) {
    return new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  }

  key(sessionId) {
    return `${this.namespace}history:${sessionId}`;
  }

  push(transaction, key, role, content) {
    transaction.rpush(key, JSON.stringify({ role, content }));
  }

  trim(transaction, key) {
    transaction.ltrim(key, -this.maxMessages, -1);
  }

  expire(transaction, key) {
    if (this.ttl) transaction.expire(key, this.ttl);
  }

  async addMessage(sessionId, role, content) {
    const key = this.key(sessionId);
    const transaction = this.redis.multi();
    this.push(transaction, key, role, content);
    this.trim(transaction, key);
    this.expire(transaction, key);
    const failed = (await transaction.exec()).find(([error]) => error);
    if (failed) throw failed[0];
  }

  async getMessages(sessionId) {
    return (await this.redis.lrange(this.key(sessionId), 0, -1)).map(raw => JSON.parse(raw));
  }

  async clear(sessionId) {
    await this.redis.del(this.key(sessionId));
  }

  async close() {
    await this.redis.quit();
  }
}
