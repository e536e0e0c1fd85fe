package io.queuebridge.connect.common;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import io.queuebridge.core.PublicApiRule;

/**
 * The rule that keeps the plugin loadable by every supported Connect worker (3.6 and later): no
 * production class names a worker API newer than 3.6 but the one class that is loaded only once the
 * running worker has been found to have it. Shipped in connect-common's test-jar; each connector
 * module checks its own classes with one call.
 *
 * <p>Newer than 3.6, and used: {@code PluginMetrics} and the task contexts' {@code pluginMetrics()}
 * (KIP-877, Connect 4.1), reached only through {@code
 * io.queuebridge.connect.common.metrics.WorkerBackend}.
 */
public final class WorkerApiRule {
  private static final String GUARDED = "io.queuebridge.connect.common.metrics.WorkerBackend";

  private WorkerApiRule() {}

  /** Fails, listing every offending dependency, for a class of {@code packages} that names one. */
  public static void checkNamesNoApiNewerThanTheOldestWorker(String... packages) {
    noClasses()
        .that()
        .doNotHaveFullyQualifiedName(GUARDED)
        .should()
        .dependOnClassesThat()
        .haveFullyQualifiedName("org.apache.kafka.common.metrics.PluginMetrics")
        .orShould()
        .callMethodWhere(
            com.tngtech.archunit.core.domain.JavaCall.Predicates.target(
                com.tngtech.archunit.core.domain.properties.HasName.Predicates.name(
                    "pluginMetrics")))
        .because(
            "Connect workers before 4.1 have no plugin metrics (KIP-877): reach them only"
                + " through TaskMetrics, which checks the worker first")
        .check(PublicApiRule.productionClasses(packages));
  }
}
