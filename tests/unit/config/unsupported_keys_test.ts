import { assertEquals } from "../../helpers/assert.ts";
import { unsupportedConfigNotices } from "../../../lib/config/unsupported.ts";

Deno.test("unsupported config keys: each one set is named with what happens instead", () => {
  assertEquals(unsupportedConfigNotices({}), []);
  assertEquals(unsupportedConfigNotices({ telemetry: false, notifications: {} }), []);
  assertEquals(
    unsupportedConfigNotices({ telemetry: true, notifications: { claim_stale_after_ms: 5000 } }),
    [
      "Config: `notifications.claim_stale_after_ms` is not supported by this build and is " +
      "ignored: notifications are delivered in memory by the kimi process that owns the " +
      "session, so there are no stale claims to take over.",
      "Config: `telemetry` is not supported by this build and is ignored: this build sends no " +
      "telemetry.",
    ],
  );
  assertEquals(unsupportedConfigNotices("not an object"), []);
});
