// Broken twins of the Node.js count-window and token-window examples, each the bug of its Python twin
// in tests/stores/broken.py (same name), each caught by the scenarios that catch that twin
// (tests/verdicts/test_foreign.py).
import { CountWindowStore } from '../../../examples/stores/node/count_window.mjs';
import { TokenWindowStore } from '../../../examples/stores/node/token_window.mjs';

// Keeps N+1 messages.
export class OffByOneTrim extends CountWindowStore {
  trim(transaction, key) {
    transaction.ltrim(key, -this.maxMessages - 1, -1);
  }
}

// LPUSH without reversing on read: histories come back newest first.
export class ReversedOrder extends CountWindowStore {
  push(transaction, key, role, content) {
    transaction.lpush(key, JSON.stringify({ role, content }));
  }

  trim(transaction, key) {
    transaction.ltrim(key, 0, this.maxMessages - 1);
  }
}

// Sets the TTL only when the key has none (EXPIRE NX): an active session still expires.
export class TTLNotRefreshed extends CountWindowStore {
  expire(transaction, key) {
    if (this.ttl) transaction.expire(key, this.ttl, 'NX');
  }
}

// Strips whitespace and braces from the session id in the key: `a b` and `ab` share a list.
export class SessionKeyCollision extends CountWindowStore {
  key(sessionId) {
    return `${this.namespace}history:${sessionId.replace(/[\s{}]/g, '')}`;
  }
}

// Trims while the total is at or over the budget: a history that fits exactly loses its oldest.
export class TokenOverTrim extends TokenWindowStore {
  overBudget() {
    return 'total >= budget';
  }
}

// When the newest message alone exceeds the budget, gives up trimming and keeps everything.
export class OversizeKeepsRest extends TokenWindowStore {
  overBudget() {
    return 'total > budget and newest <= budget';
  }
}

// Pushes, trims and sets the TTL in one Lua script sent on its own, which ioredis sends again when
// its connection drops before the reply (autoResendUnfulfilledCommands): a lost reply stores the
// message twice.
export class ClientRetries extends CountWindowStore {
  async addMessage(sessionId, role, content) {
    await this.redis.eval(`
      redis.call('RPUSH', KEYS[1], ARGV[1])
      redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
      if tonumber(ARGV[3]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end`,
    1, this.key(sessionId), JSON.stringify({ role, content }), this.maxMessages, this.ttl ?? 0);
  }
}
