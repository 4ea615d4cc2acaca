// Node.js stores that misbehave, and programs that break the store protocol: each a finding about the
// store or a usage error, never a crash or a hang of the suite's (tests/verdicts/test_foreign.py).
import { CountWindowStore } from '../../../examples/stores/node/count_window.mjs';

// Its append throws on a system message: the scenarios that send one fail with the store's own error.
export class ThrowsOnSystem extends CountWindowStore {
  async addMessage(sessionId, role, content) {
    if (role === 'system') throw new TypeError(`no system messages here: ${JSON.stringify(content.slice(0, 20))}`);
    return super.addMessage(sessionId, role, content);
  }
}

// Its load exits the whole process: the program ends, and the calls after it fail saying so.
export class ExitsOnLoad extends CountWindowStore {
  async getMessages(sessionId) {
    console.log('shutting down');   // the store's own output: kept apart from the protocol
    process.exit(7);
  }
}

// Needs a Redis client object, which cannot cross to another process.
export class TakesAClient {
  constructor(client, maxMessages) {
    this.client = client;
    this.maxMessages = maxMessages;
  }

  async addMessage(sessionId, role, content) {}

  async getMessages(sessionId) { return []; }
}

// Its load never answers: cut off by --call-timeout, as a Python store's hang is.
export class HangsOnLoad extends CountWindowStore {
  getMessages(sessionId) {
    return new Promise(() => {});
  }
}

// A token counter that returns a fraction of a token.
export const fractionalTokens = text => text.length / 4;

// Ends its own process right after the suite closes it, between two scenarios, as a store whose
// background work throws (an unhandled 'error' event, a rejected promise) ends a service.
export class ExitsWhenIdle extends CountWindowStore {
  async close() {
    await super.close();
    setTimeout(() => process.exit(5), 0);
  }
}
