/**
 * SendDMail: rewind the conversation to a checkpoint and hand a message to the past self.
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { integer } from "../lib/tooling/param_types.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolFactory } from "../lib/tooling/tool.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** Parameters of SendDMail. */
export const sendDMailParamsSchema = lazyValue(() =>
  z.object({
    message: z.string().describe("The message for your past self."),
    checkpoint_id: integer().min(0).describe("The checkpoint to send the D-Mail to."),
    restore_files: z.boolean().default(false).describe(
      "Also put the files changed (by WriteFile or StrReplaceFile) since that checkpoint back as " +
        "they were.",
    ),
  })
);
/** Parameters of SendDMail. */
export type SendDMailParams = z.infer<ReturnType<typeof sendDMailParamsSchema>>;

/** The SendDMail tool (only for agents whose soul supports D-Mail). */
export const sendDMailTool: ToolFactory = (env) => {
  const dmail = env.dmail;
  if (!dmail) return null;
  const tool: Tool<SendDMailParams> = {
    name: "SendDMail",
    description: readAsset("tools/send_dmail.md"),
    get parameters() {
      return sendDMailParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.SendDMail,
    resolve: (params) => ({ execute: () => send(params) }),
  };
  const send = (params: SendDMailParams) => {
    const error = dmail.send(params.checkpoint_id, params.message, {
      restoreFiles: params.restore_files,
    });
    if (error) {
      return Promise.resolve(toolError({
        message: `Failed to send D-Mail. Error: ${error}`,
        brief: "Failed to send D-Mail",
      }));
    }
    return Promise.resolve(toolOk({
      message: "If you see this message, the D-Mail was NOT sent successfully. This may be " +
        "because some other tool that needs approval was rejected.",
      brief: "El Psy Kongroo",
    }));
  };
  return tool;
};
