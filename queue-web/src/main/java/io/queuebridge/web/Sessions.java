package io.queuebridge.web;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The login sessions of a console that allows changes: a session is opened by the login token and
 * named by a random cookie; each holds its own CSRF token, which every form that changes a store
 * must carry back. Sessions live in memory and end after {@link #LIFETIME}, at logout, or when the
 * console stops.
 */
final class Sessions {
  /** How long a login lasts. */
  static final Duration LIFETIME = Duration.ofHours(8);

  /** Failed logins allowed in a row before the next ones are refused for {@link #LOCKOUT}. */
  static final int MAX_FAILURES = 10;

  static final Duration LOCKOUT = Duration.ofMinutes(1);

  private static final SecureRandom RANDOM = new SecureRandom();

  /**
   * One login.
   *
   * @param id the cookie's value
   * @param csrf the token the session's forms carry
   * @param expires when it ends
   */
  record Session(String id, String csrf, Instant expires) {}

  private final Clock clock;
  private final byte[] token;
  private final Map<String, Session> sessions = new ConcurrentHashMap<>();
  private int failures;
  private Instant lockedUntil = Instant.MIN;

  Sessions(String token, Clock clock) {
    this.token = token.getBytes(StandardCharsets.UTF_8);
    this.clock = clock;
  }

  /** A random token of 32 bytes, URL-safe base64: login tokens, session ids, CSRF tokens. */
  static String randomToken() {
    byte[] bytes = new byte[32];
    RANDOM.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  /**
   * A new session if {@code offered} is the login token.
   *
   * @throws ConsoleException if it is not, or if too many logins failed in a row just now
   */
  synchronized Session login(String offered) {
    Instant now = clock.instant();
    if (now.isBefore(lockedUntil)) {
      throw ConsoleException.forbidden(
          MAX_FAILURES + " logins in a row were refused: try again after " + lockedUntil);
    }
    byte[] given = offered == null ? new byte[0] : offered.strip().getBytes(StandardCharsets.UTF_8);
    if (!MessageDigest.isEqual(given, token)) {
      failures++;
      if (failures >= MAX_FAILURES) {
        failures = 0;
        lockedUntil = now.plus(LOCKOUT);
      }
      throw ConsoleException.forbidden(
          "that is not this console's login token (it was printed when the console started, or"
              + " is the content of its --token-file)");
    }
    failures = 0;
    Session s = new Session(randomToken(), randomToken(), now.plus(LIFETIME));
    sessions.put(s.id(), s);
    return s;
  }

  /** The live session the cookie names, if any. */
  Optional<Session> find(String cookie) {
    if (cookie == null) {
      return Optional.empty();
    }
    Session s = sessions.get(cookie);
    if (s == null) {
      return Optional.empty();
    }
    if (!clock.instant().isBefore(s.expires())) {
      sessions.remove(cookie);
      return Optional.empty();
    }
    return Optional.of(s);
  }

  void logout(String cookie) {
    if (cookie != null) {
      sessions.remove(cookie);
    }
  }

  /** Whether {@code offered} is the session's CSRF token (compared in constant time). */
  static boolean csrfMatches(Session s, String offered) {
    return offered != null
        && MessageDigest.isEqual(
            offered.getBytes(StandardCharsets.UTF_8), s.csrf().getBytes(StandardCharsets.UTF_8));
  }
}
