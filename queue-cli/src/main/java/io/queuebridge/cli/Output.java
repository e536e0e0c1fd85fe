package io.queuebridge.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;
import java.io.PrintWriter;
import java.time.Instant;
import picocli.CommandLine.Option;

/** {@code -o table|json}: tables for people (the default), JSON for scripts. */
final class Output {
  enum Format {
    TABLE,
    JSON
  }

  /** Instants as ISO-8601 text ({@code 2025-01-31T09:30:00.125Z}), to the nanosecond. */
  private static final SimpleModule INSTANTS =
      new SimpleModule("instants").addSerializer(Instant.class, ToStringSerializer.instance);

  private static final ObjectMapper COMPACT = new ObjectMapper().registerModule(INSTANTS);

  private static final ObjectMapper PRETTY =
      new ObjectMapper().registerModule(INSTANTS).enable(SerializationFeature.INDENT_OUTPUT);

  @Option(
      names = {"-o", "--output"},
      paramLabel = "FORMAT",
      defaultValue = "table",
      description = "table (for people, the default) or json (for scripts).")
  Format format;

  boolean json() {
    return format == Format.JSON;
  }

  /** Prints {@code value} as indented JSON. */
  static void printJson(PrintWriter out, Object value) {
    out.println(write(PRETTY, value));
    out.flush();
  }

  /** Prints {@code value} as JSON on one line (JSON Lines). */
  static void printJsonLine(PrintWriter out, Object value) {
    out.println(write(COMPACT, value));
    out.flush();
  }

  private static String write(ObjectMapper mapper, Object value) {
    try {
      return mapper.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write " + value.getClass().getSimpleName(), e);
    }
  }
}
