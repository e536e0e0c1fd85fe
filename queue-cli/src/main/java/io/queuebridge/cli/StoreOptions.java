package io.queuebridge.cli;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The one way every command names its store: {@code --config FILE}, a connector config file, or
 * {@code --store-type TYPE} with repeated {@code --store KEY=VALUE}, the provider's own keys. The
 * values of both may be {@code ${file:PATH:KEY}} references ({@link ConfigProviders}).
 */
final class StoreOptions {
  @Spec(Spec.Target.MIXEE)
  CommandSpec command;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description =
          "A connector config file (the JSON posted to Connect, or its bare config map): its"
              + " queue.store.type (default file) and queue.store.* keys name the store, as the"
              + " connector opens it.")
  Path configFile;

  @Option(
      names = "--store-type",
      paramLabel = "TYPE",
      description = "The store provider: file, postgres, memory or another installed one.")
  String storeType;

  @Option(
      names = "--store",
      paramLabel = "KEY=VALUE",
      description =
          "A key of the store provider, without the queue.store. prefix (path=/var/lib/qb,"
              + " url=jdbc:postgresql://...); repeat it for each key. Needs --store-type.")
  Map<String, String> store = new LinkedHashMap<>();

  /**
   * The store these options name.
   *
   * @throws ParameterException (a usage error) unless exactly one way was used
   * @throws CliException if the config file cannot be read or a reference cannot be resolved
   */
  StoreSpec spec() {
    boolean byKeys = storeType != null || !store.isEmpty();
    if (configFile != null && byKeys) {
      throw usage("--config and --store-type/--store both name a store: use one of them");
    }
    if (configFile != null) {
      return ConnectorConfigFile.read(configFile);
    }
    if (storeType == null) {
      throw usage(
          store.isEmpty()
              ? "no store named: give --config FILE, or --store-type TYPE with --store KEY=VALUE"
              : "--store needs --store-type TYPE");
    }
    Map<String, String> resolved = new LinkedHashMap<>();
    store.forEach((k, v) -> resolved.put(k, ConfigProviders.resolve("--store " + k, v)));
    return new StoreSpec(storeType, resolved);
  }

  private ParameterException usage(String message) {
    return new ParameterException(command.commandLine(), message);
  }
}
