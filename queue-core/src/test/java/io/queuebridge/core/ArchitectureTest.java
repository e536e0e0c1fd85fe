package io.queuebridge.core;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import io.queuebridge.core.store.QueueStore;
import io.queuebridge.core.topic.TopicIndex;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Module boundaries of queue-core: the portable core never depends on Kafka. */
class ArchitectureTest {
  private static final String CORE = "io.queuebridge.core";

  private static JavaClasses coreClasses;

  @BeforeAll
  static void importProductionClasses() {
    coreClasses =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(CORE);
  }

  private static ArchRule coreMustNotDependOn(String packageIdentifier) {
    return noClasses()
        .that()
        .resideInAPackage(CORE + "..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage(packageIdentifier)
        .allowEmptyShould(false);
  }

  @Test
  void importSeesTheProductionClassesOfTheCore() {
    // an empty import would make every "no class should" rule pass vacuously
    assertThat(coreClasses).isNotEmpty();
    assertThat(coreClasses.contain(QueueConfig.class)).isTrue();
    assertThat(coreClasses.contain(QueueStore.class)).isTrue();
    assertThat(coreClasses.contain(TopicIndex.class)).isTrue();
    assertThat(coreClasses.contain(ArchitectureTest.class)).as("tests are not imported").isFalse();
  }

  @Test
  void queueCoreNeverDependsOnKafka() {
    coreMustNotDependOn("org.apache.kafka..").check(coreClasses);
  }

  @Test
  void theRuleDetectsADependencyThatExists() {
    // the same rule, aimed at a package the core certainly uses, must report violations: proof
    // that the import records dependencies and the rule would fail for org.apache.kafka
    EvaluationResult result = coreMustNotDependOn("java.util..").evaluate(coreClasses);
    assertThat(result.hasViolation()).isTrue();
    assertThat(result.getFailureReport().getDetails())
        .anySatisfy(line -> assertThat(line).contains("TopicIndex").contains("java.util"));
  }
}
