// Mastra's Redis storage (@mastra/redis), through a thin adapter until the suite binds Mastra's memory itself:
// a thread per session, kept as Mastra's Memory keeps it: saveThread once, then saveMessages of Mastra's own
// message format (format 2, text parts), read back with listMessages in order, and deleteThread to clear.
import { randomUUID } from "node:crypto";
import { RedisStore } from "@mastra/redis";

const RESOURCE = "memory-regression";

export class MastraThreads {
  constructor({ redisUrl }) {
    this.storage = new RedisStore({ id: "memory-regression", connectionString: redisUrl });
    this.ready = this.storage.init();
  }

  async memory() {
    await this.ready;
    return this.storage.getStore("memory");
  }

  async append(sessionId, role, content) {
    const memory = await this.memory();
    if (!(await memory.getThreadById({ threadId: sessionId }))) {
      const now = new Date();
      await memory.saveThread({ thread: { id: sessionId, resourceId: RESOURCE, title: "", metadata: {},
                                          createdAt: now, updatedAt: now } });
    }
    await memory.saveMessages({ messages: [{
      id: randomUUID(), threadId: sessionId, resourceId: RESOURCE, role, createdAt: new Date(), type: "v2",
      content: { format: 2, parts: [{ type: "text", text: content }] },
    }] });
  }

  async load(sessionId) {
    const memory = await this.memory();
    const { messages } = await memory.listMessages({ threadId: sessionId, perPage: false });
    return messages.map((message) => ({
      role: message.role,
      content: message.content.parts.filter((part) => part.type === "text").map((part) => part.text).join(""),
    }));
  }

  async clear(sessionId) {
    const memory = await this.memory();
    await memory.deleteThread({ threadId: sessionId });
  }

  async close() {
    await this.storage.close();
  }
}
