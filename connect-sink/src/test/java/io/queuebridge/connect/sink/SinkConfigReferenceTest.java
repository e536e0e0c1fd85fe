package io.queuebridge.connect.sink;

import static org.assertj.core.api.Assertions.assertThat;

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
    String generated = ConfigReference.markdown(QueueSinkConfig.CONFIG_DEF).strip() + "\n";
    if (Boolean.getBoolean("queuebridge.docs.update")) {
      ConfigReference.writeSection(README, SECTION, generated);
    }
    assertThat(ConfigReference.section(README, SECTION))
        .as(
            "README.md's sink configuration reference is out of date; regenerate it with"
                + " -Dqueuebridge.docs.update=true (see this test's javadoc)")
        .isEqualTo(generated);
  }
}
