// A token-window store in Node.js over node-redis: keeps the newest messages whose token cost fits a
// budget. Its Python twin: examples/stores/token_window.py.
//
// It counts tokens its own way, with messageTokens (js-tiktoken's cl100k_base plus 3 tokens of
// chat-format overhead), so the suite is told to count the same way:
//
//   memory-regression --store examples/stores/node/token_window.mjs:TokenWindowStore \
//     --token-counter examples/stores/node/token_window.mjs:messageTokens
//
// Append and trim run in one Lua script: push the message, add its cost to the session's total, then
// pop the oldest messages while the total is over the budget. Both keys carry the session id as a hash
// tag, so the script also runs on a Redis Cluster.
import { Tiktoken } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import { createClient } from 'redis';

const OVERHEAD = 3;
const encoding = new Tiktoken(cl100kBase);

// What one message costs: its tokens (special tokens' text counted as text) plus the overhead.
export function messageTokens(content) {
  return encoding.encode(content, [], []).length + OVERHEAD;
}

// KEYS[1] the messages, KEYS[2] their total; ARGV[1] the message, ARGV[2] its cost, ARGV[3] the budget.
const appendAndTrim = overBudget => `
redis.call('RPUSH', KEYS[1], ARGV[1])
local total = redis.call('INCRBY', KEYS[2], ARGV[2])
local newest, budget = tonumber(ARGV[2]), tonumber(ARGV[3])
while ${overBudget} do
  local oldest = redis.call('LPOP', KEYS[1])
  if not oldest then break end
  total = redis.call('DECRBY', KEYS[2], cjson.decode(oldest)['tokens'])
end
if redis.call('LLEN', KEYS[1]) == 0 then redis.call('DEL', KEYS[1], KEYS[2]) end
return total
`;

export class TokenWindowStore {
  constructor(redisUrl, maxTokens) {
    this.maxTokens = maxTokens;
    this.script = appendAndTrim(this.overBudget());
    // Commands wait in node-redis's queue while it connects or reconnects, at most 2 s each: with the
    // server down, a call raises instead of waiting for it forever.
    this.client = createClient({ url: redisUrl, commandOptions: { timeout: 2000 } });
    this.client.on('error', () => {});   // node-redis reconnects; unheard, a closed connection ends the process
    this.client.connect().catch(() => {});
  }

  // The Lua condition under which the oldest message goes: `total` the session's cost, `newest` the
  // appended message's, `budget` the window's.
  overBudget() {
    return 'total > budget';
  }

  async append(sessionId, role, content) {
    const tokens = messageTokens(content);
    await this.client.eval(this.script, {
      keys: [`tokens:{${sessionId}}:messages`, `tokens:{${sessionId}}:total`],
      arguments: [JSON.stringify({ role, content, tokens }), String(tokens), String(this.maxTokens)],
    });
  }

  async get(sessionId) {
    return (await this.client.lRange(`tokens:{${sessionId}}:messages`, 0, -1)).map(raw => JSON.parse(raw));
  }

  async clear(sessionId) {
    await this.client.del([`tokens:{${sessionId}}:messages`, `tokens:{${sessionId}}:total`]);
  }

  close() {   // nothing is pending when the suite closes a store: no need to wait for replies
    this.client.destroy();
  }
}
