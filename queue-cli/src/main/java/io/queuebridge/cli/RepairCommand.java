package io.queuebridge.cli;

import io.queuebridge.core.store.file.FileStores;
import io.queuebridge.core.store.file.RecoveryReport;
import io.queuebridge.core.store.file.RepairReport;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code repair --dry-run | --yes}: cuts the damage that opening a file store found in its sealed
 * segments ({@link FileStores#repair}). Works on the files with the store's lock held, so it is
 * refused while a worker has the store open.
 */
@Command(
    name = "repair",
    mixinStandardHelpOptions = true,
    description = {
      "Repairs a file store whose sealed segments are damaged (the store opens, reports the damage"
          + " and refuses to serve it and to append to those queues). Every segment of every queue"
          + " is read frame by frame; a damaged queue is truncated to the last valid frame before"
          + " its first damaged one: that segment's tail and every later segment of the queue are"
          + " cut, and its consumer groups are clamped to the new tail (cursor and committed"
          + " lowered to it, pending entries at or past it dropped), so no group skips the offsets"
          + " new appends reuse. Other queues are left as they are. Needs --dry-run (show what"
          + " would be cut, change nothing) or --yes (cut it). Refused while a worker or another"
          + " command holds the store; file stores only.",
      ""
    },
    footer = {
      "",
      "Examples:",
      "  queue-bridge repair --dry-run --store-type file --store path=/var/lib/qb",
      "  queue-bridge repair --yes --config sink.json"
    })
final class RepairCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin StoreOptions storeOptions;

  @Mixin Output output;

  @Option(names = "--dry-run", description = "Show what would be cut; change nothing.")
  boolean dryRun;

  @Option(names = "--yes", description = "Yes, cut the damaged part of the store's queues.")
  boolean yes;

  @Override
  public Integer call() {
    if (dryRun && yes) {
      throw usage("--dry-run and --yes both given (expected one of them)");
    }
    if (!dryRun && !yes) {
      throw usage(
          "repair cuts the damaged part of the store's queues (expected --dry-run to see what it"
              + " would cut, or --yes to cut it)");
    }
    StoreSpec store = storeOptions.spec();
    if (!"file".equals(store.type())) {
      throw new CliException(
          "repair is not supported for store type '"
              + store.type()
              + "' (expected --store-type file: only the file store has segment files to repair)");
    }
    RepairReport report;
    try {
      report = FileStores.repair(store.config(), dryRun);
    } catch (RuntimeException e) {
      throw new CliException(store.redact(QueueBridgeCli.messageOf(e)));
    }
    PrintWriter out = spec.commandLine().getOut();
    if (output.json()) {
      Output.printJson(out, json(report));
    } else {
      print(report, out);
    }
    return QueueBridgeCli.OK;
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  private static void print(RepairReport r, PrintWriter out) {
    String store = "file:" + r.store();
    if (r.clean()) {
      out.println("no damage found in " + store + ": nothing to repair");
      out.flush();
      return;
    }
    for (RepairReport.QueueRepair q : r.queues()) {
      for (RecoveryReport.Damage d : q.damage()) {
        out.println(d.describe());
      }
      out.println(
          "  "
              + (r.dryRun() ? "would cut" : "cut")
              + " offsets ["
              + q.fromOffset()
              + ", "
              + q.toOffset()
              + "): "
              + q.messages()
              + " messages, "
              + q.bytes()
              + " bytes; the next append gets offset "
              + q.newTail());
      for (RepairReport.SegmentCut c : q.segments()) {
        out.println(
            "  "
                + c.file()
                + ": "
                + (c.deleted()
                    ? "deleted (" + c.cutBytes() + " bytes)"
                    : "truncated to " + c.keptBytes() + " bytes (" + c.cutBytes() + " cut)"));
      }
      for (RepairReport.GroupClamp g : q.groups()) {
        out.println(
            "  group '"
                + g.group()
                + "': cursor "
                + g.cursorBefore()
                + " -> "
                + g.cursorAfter()
                + ", committed "
                + g.committedBefore()
                + " -> "
                + g.committedAfter()
                + ", "
                + g.pendingDropped().size()
                + " pending entries dropped");
      }
    }
    String totals =
        r.messagesCut()
            + " messages ("
            + r.bytesCut()
            + " bytes) from "
            + r.queues().size()
            + (r.queues().size() == 1 ? " queue" : " queues");
    out.println(
        r.dryRun()
            ? "dry run: nothing was changed in " + store + "; repair --yes cuts " + totals
            : "repaired " + store + ": cut " + totals);
    out.flush();
  }

  private static Map<String, Object> json(RepairReport r) {
    List<Object> queues = new ArrayList<>();
    for (RepairReport.QueueRepair q : r.queues()) {
      List<Object> damage = new ArrayList<>();
      for (RecoveryReport.Damage d : q.damage()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("segment", d.file().toString());
        m.put("position", d.position());
        m.put("fromOffset", d.fromOffset());
        m.put("toOffset", d.toOffset());
        m.put("reason", d.reason());
        damage.add(m);
      }
      List<Object> segments = new ArrayList<>();
      for (RepairReport.SegmentCut c : q.segments()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("file", c.file().toString());
        m.put("deleted", c.deleted());
        m.put("keptBytes", c.keptBytes());
        m.put("cutBytes", c.cutBytes());
        segments.add(m);
      }
      List<Object> groups = new ArrayList<>();
      for (RepairReport.GroupClamp g : q.groups()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("group", g.group());
        m.put("cursorBefore", g.cursorBefore());
        m.put("cursorAfter", g.cursorAfter());
        m.put("committedBefore", g.committedBefore());
        m.put("committedAfter", g.committedAfter());
        m.put("pendingDropped", g.pendingDropped());
        groups.add(m);
      }
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("queue", q.queue());
      m.put("damage", damage);
      m.put("fromOffset", q.fromOffset());
      m.put("toOffset", q.toOffset());
      m.put("messages", q.messages());
      m.put("bytes", q.bytes());
      m.put("newTail", q.newTail());
      m.put("segments", segments);
      m.put("groups", groups);
      queues.add(m);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("store", "file:" + r.store());
    out.put("dryRun", r.dryRun());
    out.put("queues", queues);
    out.put("messagesCut", r.messagesCut());
    out.put("bytesCut", r.bytesCut());
    return out;
  }
}
