// @langchain/community's RedisChatMessageHistory over ioredis with nothing of the suite's: the two
// failures the suite finds in it, shown with the library alone (tests/verdicts/test_foreign.py).
//
//   node langchain_community_alone.mjs REDIS_URL down         no server: how long an append takes to raise
//   node langchain_community_alone.mjs REDIS_URL lost-reply   an LPUSH's reply is lost: how often it is stored
import { createServer, connect } from 'node:net';

import { RedisChatMessageHistory } from '@langchain/community/stores/message/ioredis';
import { HumanMessage } from '@langchain/core/messages';

const [url, mode] = process.argv.slice(2);

if (mode === 'down') {
  // The history's own ioredis client on a port where no server listens: its append waits out ioredis's
  // default 20 retries per request, with their backoff, before it raises.
  const history = new RedisChatMessageHistory({ sessionId: 'alone-down', url: 'redis://127.0.0.1:1/0' });
  history.client.on('error', () => {});
  const started = performance.now();
  try {
    await history.addMessage(new HumanMessage('hello'));
    console.log('stored');
  } catch (error) {
    console.log(`raised after ${((performance.now() - started) / 1000).toFixed(1)} s: ${error.message}`);
  }
  history.client.disconnect();
} else if (mode === 'lost-reply') {
  // A proxy between the history's client and the server forwards everything, but once armed it drops
  // the server's next reply (to the LPUSH of one append, which the server has executed) and closes the
  // connection. ioredis reconnects and sends the LPUSH again.
  const server = new URL(url);
  let armed = false;
  const proxy = createServer(client => {
    const upstream = connect(Number(server.port), server.hostname);
    client.pipe(upstream);
    upstream.on('data', chunk => {
      if (!armed) return client.write(chunk);
      armed = false;
      client.destroy();
      upstream.destroy();
    });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise(resolve => proxy.listen(0, '127.0.0.1', resolve));
  const sessionId = `alone-lost-reply-${process.pid}`;
  const history = new RedisChatMessageHistory({ sessionId, url: `redis://127.0.0.1:${proxy.address().port}${server.pathname}` });
  history.client.on('error', () => {});
  await history.getMessages();   // connected, before the proxy is armed
  armed = true;
  try {
    await history.addMessage(new HumanMessage('hello'));
  } catch (error) {
    console.log(`raised: ${error.message}`);
  }
  const stored = (await history.getMessages()).filter(message => message.content === 'hello').length;
  console.log(`stored ${stored} times`);
  await history.clear();
  history.client.disconnect();
  proxy.close();
}
