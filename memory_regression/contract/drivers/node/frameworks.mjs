// Stores of a known Node.js framework, recognised by their base class and driven through the
// framework's own interface and message objects, as its runtime does: the Python side sees the
// contract's shape (a factory of the contract's parameters, whole messages as chat-completions dicts).
import { randomUUID } from 'node:crypto';
import { esmEntry } from './resolve.mjs';

// The names of a class and of every class it extends.
function lineage(cls) {
  const names = [];
  for (let at = cls; typeof at === 'function' && at !== Function.prototype; at = Object.getPrototypeOf(at)) {
    names.push(at.name);
  }
  return names;
}

const ROLES = { human: 'user', ai: 'assistant', system: 'system', tool: 'tool' };

// A chat-completions dict as LangChain.js's message; its metadata goes to additional_kwargs.
function toLangChain(messages, message) {
  const fields = { content: message.content ?? '', additional_kwargs: message.metadata ? { metadata: message.metadata } : {} };
  switch (message.role) {
    case 'user': return new messages.HumanMessage(fields);
    case 'system': return new messages.SystemMessage(fields);
    case 'tool': return new messages.ToolMessage({ ...fields, tool_call_id: message.tool_call_id, name: message.name });
    default: return new messages.AIMessage({ ...fields, tool_calls: (message.tool_calls ?? []).map(call => ({
      id: call.id, name: call.function.name, args: JSON.parse(call.function.arguments || '{}'), type: 'tool_call' })) });
  }
}

// LangChain.js's message as a chat-completions dict.
function fromLangChain(message) {
  const type = message._getType?.() ?? message.getType?.();
  const found = { role: ROLES[type] ?? type, content: message.content };
  if (message.tool_calls?.length) {
    found.tool_calls = message.tool_calls.map(call => ({
      id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }));
  }
  if (type === 'tool') Object.assign(found, { tool_call_id: message.tool_call_id, name: message.name });
  if (message.additional_kwargs?.metadata) found.metadata = message.additional_kwargs.metadata;
  return found;
}

// LangChain.js chat histories (BaseListChatMessageHistory, as @langchain/redis's RedisChatMessageHistory
// and @langchain/community's over ioredis): one history per session, built from the options the Redis
// histories take (sessionId, sessionTTL, the server's url: a node-redis config's, or ioredis's url).
const langchain = {
  name: 'LangChain.js chat history',
  recognises: factory => lineage(factory).some(name => ['BaseListChatMessageHistory', 'BaseChatMessageHistory'].includes(name)),
  parameters: [{ name: 'sessionId', optional: false }, { name: 'redisUrl', optional: true }, { name: 'ttl', optional: true }],
  async build(factory, { sessionId, redisUrl, ttl }, modulePath) {
    const messages = await import(esmEntry(modulePath, '@langchain/core', './messages').href);
    const history = new factory({ sessionId, sessionTTL: ttl, config: { url: redisUrl }, url: redisUrl });
    return {
      addMessage: message => history.addMessage(toLangChain(messages, message)),
      getMessages: async () => (await history.getMessages()).map(fromLangChain),
      clear: () => history.clear(),
      // the client the history made for itself: closed with the store, as an application closes it at
      // its end, so that a server going away later finds no client to fail (node-redis's, @langchain/redis;
      // ioredis's, @langchain/community's)
      close: async () => {
        const client = history.client;
        if (client?.isOpen) await client.disconnect();
        else if (client?.status && client.status !== 'end') client.disconnect();
      },
    };
  },
};

// Mastra's storage (MastraStorage, as @mastra/redis's RedisStore): one store for every thread, built from the
// server's URL (its connectionString), driven as Mastra's Memory drives it: a thread per session (saveThread when
// it has none, for one resource), each message saved in Mastra's own format (v2, a text part), the thread's
// messages read back whole with listMessages, and the thread deleted with deleteThread. Role and content only:
// Mastra keeps a tool call as a part of the assistant's message, which no chat-completions message maps onto
// one to one, so tool calls are not driven.
const RESOURCE = 'memory-regression';
const mastra = {
  name: 'Mastra storage',
  recognises: factory => lineage(factory).includes('MastraStorage'),
  parameters: [{ name: 'redisUrl', optional: false }],
  async build(factory, { redisUrl }) {
    const storage = new factory({ id: RESOURCE, connectionString: redisUrl });
    const ready = storage.init();
    const memory = async () => { await ready; return storage.getStore('memory'); };
    return {
      async append(sessionId, role, content) {
        const store = await memory();
        if (!(await store.getThreadById({ threadId: sessionId }))) {
          const now = new Date();
          await store.saveThread({ thread: { id: sessionId, resourceId: RESOURCE, title: '', metadata: {},
                                             createdAt: now, updatedAt: now } });
        }
        await store.saveMessages({ messages: [{
          id: randomUUID(), threadId: sessionId, resourceId: RESOURCE, role, createdAt: new Date(), type: 'v2',
          content: { format: 2, parts: [{ type: 'text', text: content }] } }] });
      },
      async load(sessionId) {
        const { messages } = await (await memory()).listMessages({ threadId: sessionId, perPage: false });
        return messages.map(message => ({
          role: message.role,
          content: message.content.parts.filter(part => part.type === 'text').map(part => part.text).join(''),
        }));
      },
      clear: async sessionId => (await memory()).deleteThread({ threadId: sessionId }),
      close: () => storage.close(),
    };
  },
};

export const FRAMEWORKS = [langchain, mastra];
