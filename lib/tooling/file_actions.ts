/**
 * Approval actions of the file-editing tools ("approve for session" is keyed on them).
 *
 * @module
 */

/** Editing a file inside the workspace. */
export const EDIT_FILE_ACTION = "edit file";
/** Editing a file outside the work dir and the additional dirs. */
export const EDIT_OUTSIDE_ACTION = "edit file outside of working directory";

/** The approval action for editing a file, by whether it lies inside the workspace. */
export function editAction(insideWorkspace: boolean): string {
  return insideWorkspace ? EDIT_FILE_ACTION : EDIT_OUTSIDE_ACTION;
}
