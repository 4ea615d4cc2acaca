// Mastra's Redis storage (@mastra/redis) with nothing of the suite's: the identity defect the suite
// finds in it, shown with the library alone (tests/verdicts/test_foreign.py).
//
//   node mastra_alone.mjs REDIS_URL     threads 'alice' and 'al*', one message each; deleteThread('al*');
//                                       prints what each thread then lists
import { RedisStore } from '@mastra/redis';

const [url] = process.argv.slice(2);
const storage = new RedisStore({ id: 'alone', connectionString: url });
await storage.init();
const memory = await storage.getStore('memory');
for (const threadId of ['alice', 'al*']) {
  const now = new Date();
  await memory.saveThread({ thread: { id: threadId, resourceId: 'user', title: '', metadata: {}, createdAt: now,
                                      updatedAt: now } });
  await memory.saveMessages({ messages: [{ id: `${threadId} 1`, threadId, resourceId: 'user', role: 'user',
                                           createdAt: now, type: 'v2',
                                           content: { format: 2, parts: [{ type: 'text', text: `hi from ${threadId}` }] } }] });
}
await memory.deleteThread({ threadId: 'al*' });
for (const threadId of ['alice', 'al*']) {
  const { messages } = await memory.listMessages({ threadId, perPage: false });
  console.log(`${threadId}: ${messages.length} messages`);
}
await storage.close();
