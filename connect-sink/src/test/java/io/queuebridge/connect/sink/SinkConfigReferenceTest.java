package io.queuebridge.connect.sink;

import io.queuebridge.connect.common.ConfigReference;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The sink's configuration reference in README.md is generated from {@link
 * QueueSinkConfig#CONFIG_DEF}; this fails when the committed text drifts. To regenerate: {@code mvn
 * -pl connect-sink -am test -Dtest=SinkConfigReferenceTest -Dqueuebridge.docs.update=true
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class SinkConfigReferenceTest {
  private static final Path README = Path.of("..", "README.md");
  private static final String SECTION = "sink-config";

  @Test
  void readmeConfigReferenceMatchesTheConfigDef() throws Exception {
    ConfigReference.assertUpToDate(
        README, SECTION, QueueSinkConfig.CONFIG_DEF, "README.md's sink configuration reference");
  }
}
