package io.queuebridge.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * A plain-text table for people: a header row of column names, then one row per item, columns
 * left-aligned and two spaces apart, no trailing blanks.
 */
final class Table {
  private final List<String> headers;
  private final List<List<String>> rows = new ArrayList<>();

  Table(String... headers) {
    this.headers = List.of(headers);
  }

  /** Adds a row; each cell is shown as {@code String.valueOf(cell)}. */
  Table row(Object... cells) {
    if (cells.length != headers.size()) {
      throw new IllegalArgumentException(
          cells.length + " cells for the " + headers.size() + " columns " + headers);
    }
    List<String> row = new ArrayList<>(cells.length);
    for (Object cell : cells) {
      row.add(String.valueOf(cell));
    }
    rows.add(row);
    return this;
  }

  void print(PrintWriter out) {
    int[] widths = new int[headers.size()];
    for (int i = 0; i < widths.length; i++) {
      widths[i] = headers.get(i).length();
      for (List<String> row : rows) {
        widths[i] = Math.max(widths[i], row.get(i).length());
      }
    }
    printRow(out, headers, widths);
    for (List<String> row : rows) {
      printRow(out, row, widths);
    }
    out.flush();
  }

  private static void printRow(PrintWriter out, List<String> cells, int[] widths) {
    StringBuilder line = new StringBuilder();
    for (int i = 0; i < cells.size(); i++) {
      String cell = cells.get(i);
      line.append(cell);
      if (i < cells.size() - 1) {
        line.append(" ".repeat(widths[i] - cell.length() + 2));
      }
    }
    out.println(line);
  }
}
