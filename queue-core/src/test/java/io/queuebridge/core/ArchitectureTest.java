package io.queuebridge.core;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.store.QueueStore;
import io.queuebridge.core.topic.TopicIndex;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Module and package boundaries of queue-core, checked on its production classes: the portable core
 * never depends on Kafka; its areas (sub-packages with what lies below them) and its internal
 * engines form no cycle; the stores know nothing of the engines built on them; the public API
 * packages do not hand out the internals. The connectors' side of the line is checked where all
 * modules meet (the examples module's {@code ProjectArchitectureTest}).
 */
class ArchitectureTest {
  private static final String CORE = "io.queuebridge.core";

  /** The root package is one area; every sub-package, with what lies below it, is another. */
  private static final SliceAssignment AREAS =
      new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
          String pkg = javaClass.getPackageName();
          if (pkg.equals(CORE)) {
            return SliceIdentifier.of("(root)");
          }
          if (!pkg.startsWith(CORE + ".")) {
            return SliceIdentifier.ignore();
          }
          String rest = pkg.substring(CORE.length() + 1);
          int dot = rest.indexOf('.');
          return SliceIdentifier.of(dot < 0 ? rest : rest.substring(0, dot));
        }

        @Override
        public String getDescription() {
          return "the root package and each sub-package of " + CORE;
        }
      };

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
    assertThat(coreClasses.contain(GroupCoordinator.class)).isTrue();
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

  @Test
  void theAreasOfTheCoreFormNoCycle() {
    // an area is a sub-package with everything below it (store: the SPI, its support classes and
    // the built-in stores; inside it the SPI's default methods use the support checks), and the
    // root package (the facade) is an area of its own: the facade uses every area, no area uses it
    slices().assignedFrom(AREAS).should().beFreeOfCycles().check(coreClasses);
  }

  @Test
  void theRootPackageTakesPartInTheCycleRule() {
    // without the root package as a slice, a cycle through the facade would go unseen
    assertThat(AREAS.getIdentifierOf(coreClasses.get(QueueManager.class)))
        .isEqualTo(SliceIdentifier.of("(root)"));
    assertThat(AREAS.getIdentifierOf(coreClasses.get(QueueConfig.class)))
        .isEqualTo(SliceIdentifier.of("config"));
    assertThat(AREAS.getIdentifierOf(coreClasses.get(QueueStore.class)))
        .isEqualTo(SliceIdentifier.of("store"));
  }

  @Test
  void theInternalEnginesFormNoCycle() {
    slices().matching(CORE + ".internal.(*)..").should().beFreeOfCycles().check(coreClasses);
  }

  @Test
  void theSpiDoesNotDependOnTheBuiltInStores() {
    noClasses()
        .that()
        .resideInAnyPackage(CORE + ".store", CORE + ".store.support")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(CORE + ".store.file..", CORE + ".store.memory..")
        .check(coreClasses);
  }

  @Test
  void theStoresDoNotDependOnTheEnginesBuiltOnThem() {
    noClasses()
        .that()
        .resideInAPackage(CORE + ".store..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            CORE + ".internal..", CORE + ".group..", CORE + ".delivery..", CORE + ".job..")
        .check(coreClasses);
  }

  @Test
  void onlyTheManagerAndTheJobDriversUseTheInternals() {
    // the API packages hand out interfaces (ConsumerGroups, GroupDelivery); the engines behind them
    // are built by the facades in the root package and by the job drivers
    noClasses()
        .that()
        .resideInAnyPackage(
            CORE + ".errors..",
            CORE + ".group..",
            CORE + ".delivery..",
            CORE + ".topic..",
            CORE + ".store..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage(CORE + ".internal..")
        .check(coreClasses);
  }
}
