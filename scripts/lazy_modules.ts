/**
 * THE list of lazily imported modules and packages (see `lib/lazy_import.ts`): Deno cannot see
 * them statically, so `deno task bundle` makes each one an entry point and `deno task build`
 * passes each one to `deno compile --include`. `tests/lazy_modules_test.ts` scans the source
 * and fails when a `lazyImport`/`lazyPackage` call names something missing here (or when an
 * entry here is no longer imported lazily).
 *
 * @module
 */

/** Repository-relative paths of the modules imported through `lazyImport`. */
export const LAZY_MODULES: readonly string[] = [
  "lib/cli/entry.ts",
  "lib/cli/info.ts",
  "lib/cli/export_session.ts",
  "lib/cli/run_agent.ts",
  "lib/cli/mcp_command_actions.ts",
  "lib/cli/plugin_command_actions.ts",
  "lib/cli/run_acp.ts",
  "lib/cli/auth_command_actions.ts",
  "lib/cli/vis_run.ts",
  "lib/cli/run_web.ts",
  "lib/auth/login.ts",
  "lib/auth/token_manager.ts",
  "lib/auth/kimi_code_usage.ts",
  "lib/auth/device.ts",
  "lib/config/model_resolution.ts",
  "lib/llm/providers/echo.ts",
  "lib/llm/providers/scripted_echo.ts",
  "lib/llm/providers/openai_chat.ts",
  "lib/llm/providers/chaos.ts",
  "lib/llm/providers/openai_responses.ts",
  "lib/llm/providers/anthropic.ts",
  "lib/llm/providers/gemini.ts",
  "lib/llm/oauth_provider.ts",
  "lib/mcp/manager.ts",
  "lib/mcp/oauth.ts",
  "lib/mcp/connection.ts",
  "lib/search/ts_grep.ts",
  "lib/ui/print/print_ui.ts",
  "lib/ui/wire_server/run_wire.ts",
  "lib/ui/shell/shell_ui.ts",
  "lib/ui/shell/editor.ts",
  "lib/ui/shell/session_picker.ts",
  "lib/ui/shell/permissions_command.ts",
  "tools/builtin_factories.ts",
];

/** Import-map names of the packages imported through `lazyPackage`. */
export const LAZY_PACKAGES: readonly string[] = [
  "@vscode/ripgrep",
  "@vscode/tree-sitter-wasm",
  "diff",
  "linkedom",
  "@mozilla/readability",
  "turndown",
  "picomatch",
  "yaml",
  "openai",
  "@commander-js/extra-typings",
];

/**
 * Files that lazily imported packages read from their own directory, by package: the bundle
 * carries them (see `lazyPackageFile` in `lib/lazy_import.ts`); `deno compile` embeds the
 * whole package directory anyway.
 */
export const PACKAGE_FILES: Readonly<Record<string, readonly string[]>> = {
  "@vscode/tree-sitter-wasm": ["wasm/tree-sitter.wasm", "wasm/tree-sitter-bash.wasm"],
};

/**
 * Entry points of the program besides the lazy modules: the CLI, and the profile launcher
 * (bundled so profiles can be installed from the bundle's URL).
 */
export const PROGRAM_ENTRIES: readonly string[] = ["main.ts", "scripts/launch.ts"];
