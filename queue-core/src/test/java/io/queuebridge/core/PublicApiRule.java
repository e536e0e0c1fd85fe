package io.queuebridge.core;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;

/**
 * The architecture rule every module built on queue-core keeps (the connectors, connect-common, the
 * postgres store, the examples): it uses the core's public API only, never {@code
 * io.queuebridge.core.internal..}; and a store uses only the store SPI's side of the core, never
 * the engines built on the stores. Shipped in queue-core's test-jar; each module checks its own
 * production classes with one call.
 */
public final class PublicApiRule {
  private static final String CORE = "io.queuebridge.core";

  private PublicApiRule() {}

  /** The production classes of {@code packages}, asserted to be non-empty. */
  public static JavaClasses productionClasses(String... packages) {
    JavaClasses classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(packages);
    // an empty import would make every "no class should" rule pass vacuously
    assertThat(classes).as("production classes of %s", String.join(", ", packages)).isNotEmpty();
    return classes;
  }

  /** Fails, listing every offending dependency, when a class of {@code packages} uses internals. */
  public static void checkUsesOnlyThePublicApi(String... packages) {
    noClasses()
        .should()
        .dependOnClassesThat()
        .resideInAPackage(CORE + ".internal..")
        .because("the core's internals may change in any release; use its public API")
        .check(productionClasses(packages));
  }

  /**
   * Fails when a store class of {@code packages} uses the consumer-group, delivery or job engines:
   * a store implements the SPI and is used by them, never the other way round.
   */
  public static void checkIsAStoreOnly(String... packages) {
    checkUsesOnlyThePublicApi(packages);
    noClasses()
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(CORE + ".group..", CORE + ".delivery..", CORE + ".job..")
        .because("stores implement the SPI the engines are built on")
        .check(productionClasses(packages));
  }
}
