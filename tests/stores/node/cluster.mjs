// The Node.js count-window example on a Redis Cluster: the example's own store, connecting with a
// cluster client instead of one server's, which every key another node holds answers with MOVED
// (tests/verdicts/test_cluster.py). Its one key per session lives in one slot, so its MULTI/EXEC runs
// on a cluster as on one server. The client stops trying to reach the cluster after about 4 s, long
// enough for a restart: ioredis' default tries forever and queues every call meanwhile, so a load
// while the cluster is down waits forever (the server-down scenario is cut off, a hang).
import Redis from 'ioredis';
import { CountWindowStore } from '../../../examples/stores/node/count_window.mjs';

export class ClusterCountWindowStore extends CountWindowStore {
  connect(redisUrl) {
    return new Redis.Cluster([redisUrl], {
      clusterRetryStrategy: times => (times > 20 ? null : 200),
      redisOptions: { maxRetriesPerRequest: 1 },
    });
  }
}
