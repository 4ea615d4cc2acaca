// Broken twins of the Node.js count-window example, each the bug of its Python twin in
// tests/stores/broken.py (same name), each caught by the scenarios that catch that twin
// (tests/verdicts/test_foreign.py).
import { CountWindowStore } from '../../../examples/stores/node/count_window.mjs';

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
