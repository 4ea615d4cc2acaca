// A token-window store that compacts, built with the suite's token counter and summariser, which
// reach it over the store protocol as async functions (countTokens, summarize): the twin of
// tests/stores/compaction.py's CompactingTokenStore, with one Lua script where that one uses WATCH.
// Its broken twin UncountedSummary is caught by the scenario that catches the Python one.
import Redis from 'ioredis';

const KEEP_RECENT = 2;
const COMPACT_ATTEMPTS = 5;

// KEYS[1] the messages, KEYS[2] their total; ARGV[1] the message, ARGV[2] its cost, ARGV[3] the budget,
// ARGV[4] the TTL.
const APPEND_AND_TRIM = `
redis.call('RPUSH', KEYS[1], ARGV[1])
local total = redis.call('INCRBY', KEYS[2], ARGV[2])
while total > tonumber(ARGV[3]) do
  local oldest = redis.call('LPOP', KEYS[1])
  if not oldest then break end
  total = redis.call('DECRBY', KEYS[2], cjson.decode(oldest)['tokens'])
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return total
`;

// ARGV[1] the summary record, ARGV[2] how many messages it replaces, ARGV[3] what that changes the
// total by, ARGV[4] the TTL, ARGV[5..] those messages as read. 1 if replaced, 0 if the head changed.
const REPLACE_HEAD = `
local count = tonumber(ARGV[2])
local head = redis.call('LRANGE', KEYS[1], 0, count - 1)
if #head ~= count then return 0 end
for i = 1, count do
  if head[i] ~= ARGV[4 + i] then return 0 end
end
redis.call('LTRIM', KEYS[1], count, -1)
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('INCRBY', KEYS[2], ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return 1
`;

export class CompactingTokenStore {
  constructor({ redisUrl, namespace, maxTokens, countTokens, summarize, ttl }) {
    Object.assign(this, { namespace, maxTokens, countTokens, summarize, ttl });
    this.redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    this.redis.defineCommand('appendAndTrim', { numberOfKeys: 2, lua: APPEND_AND_TRIM });
    this.redis.defineCommand('replaceHead', { numberOfKeys: 2, lua: REPLACE_HEAD });
  }

  keys(sessionId) {
    return [`${this.namespace}tokens:{${sessionId}}`, `${this.namespace}tokens-total:{${sessionId}}`];
  }

  async summaryCost(summary) {
    return await this.countTokens(summary);
  }

  async append(sessionId, role, content) {
    const tokens = await this.countTokens(content);
    // in MULTI/EXEC, which ioredis does not send again when the reply was lost (a lone EVALSHA it would:
    // the message stored twice)
    const [[error]] = await this.redis.multi().appendAndTrim(...this.keys(sessionId), JSON.stringify({ role, content, tokens }),
                                                            tokens, this.maxTokens, this.ttl).exec();
    if (error) throw error;
  }

  async get(sessionId) {
    return (await this.redis.lrange(this.keys(sessionId)[0], 0, -1)).map(raw => JSON.parse(raw));
  }

  async clear(sessionId) {
    await this.redis.del(...this.keys(sessionId));
  }

  // Summarise all but the newest two messages and replace them with the summary, recorded with its
  // own cost; again if the session's head changed meanwhile.
  async compact(sessionId) {
    const keys = this.keys(sessionId);
    for (let attempt = 0; attempt < COMPACT_ATTEMPTS; attempt++) {
      const raw = await this.redis.lrange(keys[0], 0, -1);
      if (raw.length < 2) return;
      const head = raw.slice(0, Math.max(1, raw.length - KEEP_RECENT)).map(item => JSON.parse(item));
      const summary = await this.summarize(head.map(({ role, content }) => ({ role, content })));
      const cost = await this.summaryCost(summary);
      const change = cost - head.reduce((sum, message) => sum + message.tokens, 0);
      const record = JSON.stringify({ role: 'system', content: summary, tokens: cost });
      if (await this.redis.replaceHead(...keys, record, head.length, change, this.ttl, ...raw.slice(0, head.length))) return;
    }
    throw new Error('the session kept changing while it was being compacted');
  }

  async close() {
    await this.redis.quit();
  }
}

// Records the summary with a cost of nothing, so the budget never counts it.
export class UncountedSummary extends CompactingTokenStore {
  async summaryCost() {
    return 0;
  }
}
