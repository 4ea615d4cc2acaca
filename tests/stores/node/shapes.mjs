// The count-window example behind names of its own, which the contract does not know: a window
// parameter, an append and a load, given to the suite in the store's spelling (--store-params
// historyLimit=max_messages, --append-method recordTurn, --load-method transcript).
import { CountWindowStore } from '../../../examples/stores/node/count_window.mjs';

export class OwnNames {
  constructor(redisUrl, historyLimit) {
    this.inner = new CountWindowStore(redisUrl, historyLimit);
  }

  recordTurn(sessionId, role, content) {
    return this.inner.addMessage(sessionId, role, content);
  }

  transcript(sessionId) {
    return this.inner.getMessages(sessionId);
  }

  close() {
    return this.inner.close();
  }
}
