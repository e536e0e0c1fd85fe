package io.queuebridge.web;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queuebridge.cli.CommandRunner;
import io.queuebridge.cli.CommandRunner.ConnectorFile;
import io.queuebridge.cli.CommandRunner.Result;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The stores the console shows, named by connector config files, and the one way it reads or
 * changes them: a {@code queue-bridge} command run in this process ({@link CommandRunner}) with
 * JSON output. Several configs that name one store (a sink and the source reading its streams) are
 * one store here, titled by all their connectors' names.
 */
final class Bridge implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * One store.
   *
   * @param id its number in the console's addresses (1, 2, ...)
   * @param type its provider ({@code file}, {@code postgres}, ...)
   * @param config the first connector config that names it, passed to every command
   * @param connectors every connector config that names it
   */
  record Store(String id, String type, Path config, List<ConnectorFile> connectors) {
    /** The connectors' names, or the config file's name where a config has none. */
    String title() {
      return connectors.stream()
          .map(c -> c.name() != null ? c.name() : c.file().getFileName().toString())
          .collect(Collectors.joining(", "));
    }
  }

  private final CommandRunner runner;
  private final Map<String, Store> stores;
  private final List<ConnectorFile> connectors;

  private Bridge(CommandRunner runner, Map<String, Store> stores, List<ConnectorFile> connectors) {
    this.runner = runner;
    this.stores = stores;
    this.connectors = connectors;
  }

  /**
   * The stores {@code configs} name. Nothing is opened yet.
   *
   * @throws io.queuebridge.cli.CliException naming the file that cannot be read
   */
  static Bridge of(List<Path> configs, CommandRunner runner) {
    Objects.requireNonNull(runner, "runner");
    Map<String, List<ConnectorFile>> byStore = new LinkedHashMap<>();
    List<ConnectorFile> all = new ArrayList<>();
    for (Path file : configs) {
      ConnectorFile c = CommandRunner.readConnector(file);
      all.add(c);
      byStore.computeIfAbsent(c.store(), k -> new ArrayList<>()).add(c);
    }
    Map<String, Store> stores = new LinkedHashMap<>();
    for (List<ConnectorFile> group : byStore.values()) {
      String id = String.valueOf(stores.size() + 1);
      String type = group.get(0).store().split(" ", 2)[0];
      stores.put(id, new Store(id, type, group.get(0).file(), List.copyOf(group)));
    }
    return new Bridge(runner, stores, List.copyOf(all));
  }

  List<Store> stores() {
    return List.copyOf(stores.values());
  }

  List<ConnectorFile> connectors() {
    return connectors;
  }

  /**
   * The store numbered {@code id}.
   *
   * @throws ConsoleException if there is none
   */
  Store store(String id) {
    Store store = id == null ? null : stores.get(id);
    if (store == null) {
      throw ConsoleException.notFound(
          "no store numbered '"
              + id
              + "' (expected one of "
              + String.join(", ", stores.keySet())
              + ": the overview lists them)");
    }
    return store;
  }

  /**
   * Runs {@code args} on {@code store} with {@code --config} and {@code -o json} added, and returns
   * what it printed.
   *
   * @throws ConsoleException with the command's own message if it fails
   */
  JsonNode json(Store store, String... args) {
    return parse(run(store, args).out());
  }

  /** As {@link #json}, for a command that prints one JSON value per line ({@code tail}). */
  List<JsonNode> jsonLines(Store store, String... args) {
    List<JsonNode> values = new ArrayList<>();
    for (String line : run(store, args).out().split("\n")) {
      if (!line.isBlank()) {
        values.add(parse(line));
      }
    }
    return values;
  }

  /** Runs {@code args} as they are (no store option added), with {@code -o json}. */
  JsonNode jsonOf(List<String> args) {
    List<String> all = new ArrayList<>(args);
    all.add("-o");
    all.add("json");
    return parse(check(runner.run(all)).out());
  }

  private Result run(Store store, String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--config");
    all.add(store.config().toString());
    all.add("-o");
    all.add("json");
    return check(runner.run(all));
  }

  private static Result check(Result result) {
    if (result.ok()) {
      return result;
    }
    String message = result.error();
    if (message.isEmpty()) {
      message = "the command failed with exit status " + result.status();
    }
    int status = result.status() == 2 ? 400 : message.contains(" not found") ? 404 : 409;
    throw new ConsoleException(status, message);
  }

  private static JsonNode parse(String text) {
    try {
      return JSON.readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException("a command printed what is not JSON", e);
    }
  }

  @Override
  public void close() {
    runner.close();
  }
}
