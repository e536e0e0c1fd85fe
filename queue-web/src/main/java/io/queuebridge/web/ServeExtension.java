package io.queuebridge.web;

import io.queuebridge.cli.CliExtension;

/** Adds {@code serve} to {@code queue-bridge} when this module is on the class path. */
public final class ServeExtension implements CliExtension {
  @Override
  public Object command() {
    return new ServeCommand();
  }
}
