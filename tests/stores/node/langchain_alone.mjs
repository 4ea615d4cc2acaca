// LangChain.js's RedisChatMessageHistory (@langchain/redis) with nothing of the suite's: the two
// failures the suite finds in it, shown with the library alone (tests/verdicts/test_foreign.py).
//
//   node langchain_alone.mjs REDIS_URL killed       its client loses its connection: the process dies
//   node langchain_alone.mjs REDIS_URL concurrent   a history's first two calls at once: one throws
import { HumanMessage } from '@langchain/core/messages';
import { RedisChatMessageHistory } from '@langchain/redis';
import { createClient } from 'redis';

const [url, mode] = process.argv.slice(2);

if (mode === 'killed') {
  // One history, used once; then the server closes the history's connection (CLIENT KILL), as a
  // failover, a restart or an idle timeout does. The client it was given has no 'error' listener,
  // so the error it emits is unhandled, and ends the process.
  const history = new RedisChatMessageHistory({ sessionId: 'alone-killed', config: { url } });
  await history.addMessage(new HumanMessage('hello'));
  const admin = createClient({ url });
  await admin.connect();
  await admin.sendCommand(['CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes']);
  await admin.quit();
  await new Promise(resolve => setTimeout(resolve, 2000));
  console.log('the process survived its connection being closed');
  process.exit(0);
} else if (mode === 'concurrent') {
  // One history, its first two appends at once, as two requests of a session make them: both find its
  // client not ready, and both connect it.
  const history = new RedisChatMessageHistory({ sessionId: 'alone-concurrent', config: { url } });
  const results = await Promise.allSettled([history.addMessage(new HumanMessage('a')), history.addMessage(new HumanMessage('b'))]);
  for (const result of results) console.log(result.status === 'fulfilled' ? 'stored' : `threw: ${result.reason.message}`);
  process.exit(0);
}
