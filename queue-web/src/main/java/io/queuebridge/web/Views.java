package io.queuebridge.web;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Turns what the commands print (JSON) into what the templates show (text). */
final class Views {
  /** Longer keys, values and header values are cut on the page, with a link to the whole. */
  static final int SHOWN_CHARS = 400;

  private Views() {}

  /** {@code ms} as the command line shows an age: {@code 950ms}, {@code 42s}, {@code 3m12s}. */
  static String age(JsonNode ms) {
    return ms == null || ms.isNull() ? "-" : age(ms.asLong());
  }

  static String age(long ms) {
    if (ms < 1000) {
      return ms + "ms";
    }
    Duration d = Duration.ofMillis(ms);
    if (d.toHours() >= 24) {
      return d.toDays() + "d" + d.toHoursPart() + "h";
    }
    if (d.toHours() > 0) {
      return d.toHours() + "h" + d.toMinutesPart() + "m";
    }
    if (d.toMinutes() > 0) {
      return d.toMinutes() + "m" + d.toSecondsPart() + "s";
    }
    return d.toSeconds() + "s";
  }

  /** A duration setting in milliseconds; 0 as {@code none}. */
  static String millis(JsonNode ms) {
    return ms == null || ms.isNull() || ms.asLong() == 0 ? "none" : age(ms.asLong());
  }

  /** A JSON value as text: {@code -} for null or missing. */
  static String text(JsonNode node) {
    if (node == null || node.isNull() || node.isMissingNode()) {
      return "-";
    }
    return node.isValueNode() ? node.asText() : node.toString();
  }

  static String yesNo(JsonNode node) {
    return node != null && node.asBoolean() ? "yes" : "no";
  }

  /** {@code s} encoded for a query parameter. */
  static String q(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  /**
   * A payload ({@code {"utf8": ...}}, {@code {"base64": ...}} or {@code {"hex": ...}}) as the
   * command line shows it: the text, else {@code base64:...}; {@code null} for none.
   */
  static String payload(JsonNode p) {
    if (p == null || p.isNull()) {
      return null;
    }
    if (p.has("utf8")) {
      String t = p.get("utf8").asText();
      return t.isEmpty() ? "(empty)" : t;
    }
    if (p.has("base64")) {
      return "base64:" + p.get("base64").asText();
    }
    return "hex:" + p.get("hex").asText();
  }

  /** The bytes of a payload; null for none. */
  static byte[] bytes(JsonNode p) {
    if (p == null || p.isNull()) {
      return null;
    }
    if (p.has("utf8")) {
      return p.get("utf8").asText().getBytes(StandardCharsets.UTF_8);
    }
    if (p.has("base64")) {
      return Base64.getDecoder().decode(p.get("base64").asText());
    }
    return HexFormat.of().parseHex(p.get("hex").asText());
  }

  /**
   * One message ({@code tail -o json}) for the browser: offset, times, key, value and headers as
   * text, each cut at {@link #SHOWN_CHARS} with a note of its whole size.
   */
  static Map<String, Object> message(JsonNode m, String downloadBase) {
    Map<String, Object> v = new LinkedHashMap<>();
    long offset = m.get("offset").asLong();
    v.put("offset", offset);
    v.put("id", text(m.get("id")));
    v.put("createdAt", text(m.get("createdAt")));
    JsonNode topic = m.get("topic");
    v.put("topic", topic == null || topic.isNull() ? null : topic.asText());
    v.put("key", cut(payload(m.get("key")), downloadBase + "&offset=" + offset + "&part=key"));
    v.put(
        "value", cut(payload(m.get("value")), downloadBase + "&offset=" + offset + "&part=value"));
    List<Map<String, Object>> headers = new ArrayList<>();
    List<Map<String, Object>> provenance = new ArrayList<>();
    for (JsonNode h : m.withArray("headers")) {
      Map<String, Object> hv = new LinkedHashMap<>();
      String key = h.get("key").asText();
      hv.put("key", key);
      hv.put("value", cut(payload(h.get("value")), null));
      headers.add(hv);
      if (key.startsWith("x-dlq-")) {
        provenance.add(hv);
      }
    }
    JsonNode props = m.get("properties");
    if (props != null) {
      props
          .properties()
          .forEach(
              e -> {
                if (e.getKey().startsWith("x-dlq-")) {
                  Map<String, Object> hv = new LinkedHashMap<>();
                  hv.put("key", e.getKey());
                  hv.put("value", cut(e.getValue().asText(), null));
                  provenance.add(hv);
                }
              });
    }
    v.put("headers", headers);
    v.put("provenance", provenance);
    return v;
  }

  /** {@code text} cut for the page: {@code shown}, whether it was cut, and where the whole is. */
  static Map<String, Object> cut(String text, String download) {
    Map<String, Object> v = new LinkedHashMap<>();
    if (text == null) {
      v.put("shown", "(none)");
      v.put("none", true);
      return v;
    }
    boolean cut = text.length() > SHOWN_CHARS;
    v.put("shown", cut ? text.substring(0, SHOWN_CHARS) : text);
    v.put("cut", cut);
    v.put("length", text.length());
    if (cut && download != null) {
      v.put("download", download);
    }
    return v;
  }
}
