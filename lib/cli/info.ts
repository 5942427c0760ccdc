/**
 * `kimi info [--json]`: versions of this program and its protocols.
 *
 * @module
 */
import { AGENT_SPEC_VERSIONS, VERSION, WIRE_PROTOCOL_VERSION } from "../version.ts";

/** What `kimi info --json` prints. */
export interface InfoReport {
  /** CLI version. */
  kimi_cli_version: string;
  /** Agent spec versions. */
  agent_spec_versions: string[];
  /** Wire protocol version. */
  wire_protocol_version: string;
  /** Runtime version (the reference reports Python's; we report Deno's). */
  deno_version: string;
}

/** Collect the report. */
export function infoReport(): InfoReport {
  return {
    kimi_cli_version: VERSION,
    agent_spec_versions: [...AGENT_SPEC_VERSIONS],
    wire_protocol_version: WIRE_PROTOCOL_VERSION,
    deno_version: Deno.version.deno,
  };
}

/** Print the report as text or JSON. */
export function printInfo(json: boolean): void {
  const r = infoReport();
  if (json) {
    console.log(JSON.stringify(r, null, 2));
    return;
  }
  console.log(`kimi-cli version: ${r.kimi_cli_version}`);
  console.log(`agent spec versions: ${r.agent_spec_versions.join(", ")}`);
  console.log(`wire protocol: ${r.wire_protocol_version}`);
  console.log(`deno version: ${r.deno_version}`);
}
