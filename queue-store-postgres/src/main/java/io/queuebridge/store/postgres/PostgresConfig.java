package io.queuebridge.store.postgres;

import io.queuebridge.core.errors.InvalidConfigException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A validated PostgreSQL store configuration (the keys of {@link PostgresStoreProvider}).
 *
 * <p>The password is kept only in {@link #password()}; {@link #toString()}, {@link #description()}
 * and every error message leave it out. Immutable and thread-safe.
 */
final class PostgresConfig {
  static final String URL = "url";
  static final String USER = "user";
  static final String PASSWORD = "password";
  static final String SCHEMA = "schema";
  static final String POOL_SIZE = "pool.size";
  static final String CONNECT_TIMEOUT_MS = "connect.timeout.ms";
  static final String POLL_INTERVAL_MS = "poll.interval.ms";

  static final String DEFAULT_SCHEMA = "queuebridge";
  static final int DEFAULT_POOL_SIZE = 4;
  static final long DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
  static final long DEFAULT_POLL_INTERVAL_MS = 500;

  static final Set<String> KEYS =
      Set.of(URL, USER, PASSWORD, SCHEMA, POOL_SIZE, CONNECT_TIMEOUT_MS, POLL_INTERVAL_MS);

  /**
   * A lower-case SQL identifier short enough that {@code qb_<schema>} (the notification channel)
   * stays within PostgreSQL's 63-byte identifier limit.
   */
  private static final Pattern SCHEMA_NAME = Pattern.compile("[a-z_][a-z0-9_]{0,47}");

  private static final String URL_PREFIX = "jdbc:postgresql:";

  private final String url;
  private final String user;
  private final String password;
  private final String schema;
  private final int poolSize;
  private final long connectTimeoutMs;
  private final long pollIntervalMs;

  private PostgresConfig(
      String url,
      String user,
      String password,
      String schema,
      int poolSize,
      long connectTimeoutMs,
      long pollIntervalMs) {
    this.url = url;
    this.user = user;
    this.password = password;
    this.schema = schema;
    this.poolSize = poolSize;
    this.connectTimeoutMs = connectTimeoutMs;
    this.pollIntervalMs = pollIntervalMs;
  }

  /**
   * Validates every key.
   *
   * @throws InvalidConfigException naming the first bad key, its value (never a password) and what
   *     was expected; unknown keys included
   */
  static PostgresConfig parse(Map<String, String> config) {
    Objects.requireNonNull(config, "config");
    for (String key : config.keySet()) {
      if (!KEYS.contains(key)) {
        throw new InvalidConfigException(
            key,
            "(value not shown: a misspelt key may hold a secret)",
            "no such key: the postgres store accepts " + new java.util.TreeSet<>(KEYS));
      }
    }
    String url = config.get(URL);
    if (url == null || url.isBlank()) {
      throw new InvalidConfigException(URL, url, "a JDBC URL starting with " + URL_PREFIX);
    }
    if (url.toLowerCase(Locale.ROOT).contains("password=")) {
      throw new InvalidConfigException(
          URL,
          redactUrl(url),
          "a JDBC URL without a password parameter (put the password in the '"
              + PASSWORD
              + "' key, so that it never shows in logs)");
    }
    if (!url.startsWith(URL_PREFIX)) {
      throw new InvalidConfigException(URL, url, "a JDBC URL starting with " + URL_PREFIX);
    }
    String user = config.get(USER);
    if (user != null && user.isBlank()) {
      throw new InvalidConfigException(USER, user, "a non-blank role name, or no key at all");
    }
    String password = config.get(PASSWORD);
    String schema = config.getOrDefault(SCHEMA, DEFAULT_SCHEMA);
    if (schema == null || !SCHEMA_NAME.matcher(schema).matches()) {
      throw new InvalidConfigException(
          SCHEMA,
          schema,
          "1 to 48 characters of [a-z0-9_], starting with a letter or underscore (an unquoted"
              + " lower-case SQL identifier)");
    }
    int poolSize = (int) number(config, POOL_SIZE, DEFAULT_POOL_SIZE, 1, 64);
    long connectTimeout =
        number(config, CONNECT_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS, 250, 600_000);
    long pollInterval = number(config, POLL_INTERVAL_MS, DEFAULT_POLL_INTERVAL_MS, 10, 60_000);
    return new PostgresConfig(url, user, password, schema, poolSize, connectTimeout, pollInterval);
  }

  private static long number(
      Map<String, String> config, String key, long dflt, long min, long max) {
    String raw = config.get(key);
    if (raw == null) {
      return dflt;
    }
    long v;
    try {
      v = Long.parseLong(raw.trim());
    } catch (NumberFormatException e) {
      throw new InvalidConfigException(key, raw, "an integer in [" + min + ", " + max + "]");
    }
    if (v < min || v > max) {
      throw new InvalidConfigException(key, raw, "an integer in [" + min + ", " + max + "]");
    }
    return v;
  }

  /** The URL without its query string (parameters may hold secrets or noise). */
  static String redactUrl(String url) {
    int q = url.indexOf('?');
    return q < 0 ? url : url.substring(0, q) + "?…";
  }

  String url() {
    return url;
  }

  /** The role, or null to let the driver decide (URL parameter or the OS user). */
  String user() {
    return user;
  }

  /** The password, or null. Never log it. */
  String password() {
    return password;
  }

  String schema() {
    return schema;
  }

  int poolSize() {
    return poolSize;
  }

  long connectTimeoutMs() {
    return connectTimeoutMs;
  }

  long pollIntervalMs() {
    return pollIntervalMs;
  }

  /** {@code postgres:<url without parameters>#<schema>}: where the store is, without secrets. */
  String location() {
    int q = url.indexOf('?');
    return "postgres:" + (q < 0 ? url : url.substring(0, q)) + "#" + schema;
  }

  /**
   * The sharing identity: the {@link #location}, the user and a fingerprint of the password, so
   * that a configuration with other credentials never borrows a store another configuration opened
   * (a wrong password must fail, not ride on an open pool). The fingerprint is an HMAC under a key
   * drawn at random once per JVM: stable within the process, which is all sharing needs, and of no
   * use for guessing the password.
   */
  String identity() {
    return description() + " credential " + fingerprint(password);
  }

  /** A description for logs; no password. */
  String description() {
    return location() + (user == null ? "" : " as " + user);
  }

  private static final byte[] FINGERPRINT_KEY = new SecureRandom().generateSeed(32);

  private static String fingerprint(String secret) {
    if (secret == null) {
      return "none";
    }
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(FINGERPRINT_KEY, "HmacSHA256"));
      byte[] h = mac.doFinal(secret.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(h, 0, 8);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is a required JDK algorithm", e);
    }
  }

  /** The LISTEN/NOTIFY channel of this store (an identifier: schema names are validated). */
  String channel() {
    return "qb_" + schema;
  }

  @Override
  public String toString() {
    return description();
  }
}
