// The count-window example written in TypeScript, loaded through tsx (from this project's node_modules):
// types, an interface and a parameter property, which plain Node.js cannot run.
import { CountWindowStore } from '../../../examples/stores/node/count_window.mjs';

interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

export class TypedCountWindowStore {
  private readonly inner: CountWindowStore;

  constructor(redisUrl: string, maxMessages: number, ttl?: number, namespace: string = 'typed:') {
    this.inner = new CountWindowStore(redisUrl, maxMessages, ttl, namespace);
  }

  async addMessage(sessionId: string, role: ChatMessage['role'], content: string): Promise<void> {
    await this.inner.addMessage(sessionId, role, content);
  }

  async getMessages(sessionId: string): Promise<ChatMessage[]> {
    return (await this.inner.getMessages(sessionId)) as ChatMessage[];
  }

  async clear(sessionId: string): Promise<void> {
    await this.inner.clear(sessionId);
  }

  async close(): Promise<void> {
    await this.inner.close();
  }
}
