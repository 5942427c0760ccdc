import { assertEquals } from "../../helpers/assert.ts";
import {
  findGitBash,
  GIT_BASH_PATH_ENV,
  gitBashCandidates,
  type GitBashSearch,
} from "../../../lib/process/shell_info.ts";

function search(env: Record<string, string>, files: string[]): GitBashSearch {
  const set = new Set(files);
  return { env: (n) => env[n], isFile: (p) => set.has(p) };
}

const BASE_ENV = {
  ProgramFiles: "C:\\Program Files",
  "ProgramFiles(x86)": "C:\\Program Files (x86)",
  LOCALAPPDATA: "C:\\Users\\u\\AppData\\Local",
};

Deno.test("Git Bash search order: KIMI_CLI_GIT_BASH_PATH, git on PATH, the usual install paths", () => {
  const env = {
    ...BASE_ENV,
    [GIT_BASH_PATH_ENV]: "D:\\tools\\bash.exe",
    PATH: "C:\\Windows;E:\\Git\\cmd;F:\\PortableGit\\mingw64\\bin",
  };
  assertEquals(
    gitBashCandidates(
      search(env, ["E:\\Git\\cmd\\git.exe", "F:\\PortableGit\\mingw64\\bin\\git.exe"]),
    ),
    [
      "D:\\tools\\bash.exe",
      "E:\\Git\\bin\\bash.exe",
      "F:\\PortableGit\\bin\\bash.exe",
      "C:\\Program Files\\Git\\bin\\bash.exe",
      "C:\\Program Files (x86)\\Git\\bin\\bash.exe",
      "C:\\Users\\u\\AppData\\Local\\Programs\\Git\\bin\\bash.exe",
    ],
  );
  // the first that exists wins
  assertEquals(
    findGitBash(search({ ...BASE_ENV, PATH: "E:\\Git\\cmd" }, [
      "E:\\Git\\cmd\\git.exe",
      "E:\\Git\\bin\\bash.exe",
      "C:\\Program Files\\Git\\bin\\bash.exe",
    ])),
    { path: "E:\\Git\\bin\\bash.exe" },
  );
  assertEquals(
    findGitBash(search(BASE_ENV, ["C:\\Users\\u\\AppData\\Local\\Programs\\Git\\bin\\bash.exe"])),
    { path: "C:\\Users\\u\\AppData\\Local\\Programs\\Git\\bin\\bash.exe" },
  );
  assertEquals(
    findGitBash(search({ ...BASE_ENV, [GIT_BASH_PATH_ENV]: "D:\\b.exe" }, [
      "D:\\b.exe",
      "C:\\Program Files\\Git\\bin\\bash.exe",
    ])),
    { path: "D:\\b.exe" },
  );
});

Deno.test("Git Bash search: a wrong KIMI_CLI_GIT_BASH_PATH and none found are clear errors", () => {
  const wrong = findGitBash(search({ ...BASE_ENV, [GIT_BASH_PATH_ENV]: "D:\\nope.exe" }, [
    "C:\\Program Files\\Git\\bin\\bash.exe",
  ]));
  assertEquals(wrong, {
    error: "KIMI_CLI_GIT_BASH_PATH is set to `D:\\nope.exe`, which is not a file. Point it at " +
      "Git Bash's bash.exe (e.g. C:\\Program Files\\Git\\bin\\bash.exe), or unset it.",
  });
  const none = findGitBash(search(BASE_ENV, []));
  assertEquals(none, {
    error: "kimi needs Git Bash on Windows to run shell commands, and found none (looked at " +
      "C:\\Program Files\\Git\\bin\\bash.exe, C:\\Program Files (x86)\\Git\\bin\\bash.exe, " +
      "C:\\Users\\u\\AppData\\Local\\Programs\\Git\\bin\\bash.exe). Install Git for Windows " +
      "(https://git-scm.com/download/win), or set KIMI_CLI_GIT_BASH_PATH to the path of its " +
      "bash.exe.",
  });
});
