package io.queuebridge.connect.sink;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.Test;

class EmbeddedClusterSmokeIT {
  @Test
  void brokerAndWorkerStart() {
    EmbeddedConnectCluster c =
        new EmbeddedConnectCluster.Builder()
            .name("smoke")
            .numWorkers(1)
            .numBrokers(1)
            .workerProps(new java.util.HashMap<>())
            .build();
    c.start();
    try {
      c.kafka().createTopic("t", 1);
      c.kafka().produce("t", "k", "v");
      assertThat(c.kafka().consume(1, 30_000, "t").count()).isEqualTo(1);
    } finally {
      c.stop();
    }
  }
}
