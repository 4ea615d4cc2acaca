// The Node.js count-window example on a Redis Cluster: the example's own store, connecting with a
// cluster client instead of one server's, which every key another node holds answers with MOVED
// (tests/verdicts/test_cluster.py). Its one key per session lives in one slot, so its MULTI/EXEC runs
// on a cluster as on one server.
import Redis from 'ioredis';
import { CountWindowStore } from '../../../examples/stores/node/count_window.mjs';

export class ClusterCountWindowStore extends CountWindowStore {
  connect(redisUrl) {
    return new Redis.Cluster([redisUrl], { redisOptions: { maxRetriesPerRequest: 1 } });
  }
}
