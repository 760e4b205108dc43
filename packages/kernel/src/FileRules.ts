/**
 * The rules for the files an export or a `changes` run replaces (an `--output` file, a `changes` state): which of
 * them must not be replaced, how a symbolic link to one is followed, and where a file's mode may be set by its name.
 * The command line (`erp … --output`, `--since`) and both editions' `Changes.layerFile` apply them (docs/cli.md,
 * "Files, resume and restart").
 *
 * @since 0.1.0
 */

/**
 * How many symbolic links are followed from a name to the file it stands for, as the kernel's own limit (Linux's
 * `MAXSYMLINKS`): more is a loop.
 *
 * @since 0.1.0
 * @category Constants
 */
export const MAX_LINKS = 40

/**
 * Whether an existing file must not be replaced: this user cannot write it (`access(W_OK)` failed), or it has no
 * write bit for its owner and this process is its owner or root. Root passes every access check, so the mode is what
 * says an operator made the file read-only on purpose; a file of another user that this user may write (a group's) is
 * judged by access alone.
 *
 * @example
 * ```ts
 * import { FileRules } from "@erp-client/kernel"
 *
 * console.log(FileRules.isReadOnly({ mode: 0o100444, uid: 1000 }, { uid: 0, writable: true })) // => true
 * console.log(FileRules.isReadOnly({ mode: 0o100644, uid: 1000 }, { uid: 1000, writable: true })) // => false
 * ```
 *
 * @since 0.1.0
 * @category Rules
 */
export const isReadOnly = (
  file: { readonly mode: number; readonly uid: number | undefined },
  me: { readonly uid: number | undefined; readonly writable: boolean }
): boolean =>
  !me.writable || ((me.uid === 0 || (me.uid !== undefined && me.uid === file.uid)) && (file.mode & 0o200) === 0)

/**
 * `read-only for this user (mode 0444)`: why a read-only file is not replaced, after its name.
 *
 * @example
 * ```ts
 * import { FileRules } from "@erp-client/kernel"
 *
 * console.log(FileRules.describeReadOnly(0o100444)) // => read-only for this user (mode 0444)
 * ```
 *
 * @since 0.1.0
 * @category Rules
 */
export const describeReadOnly = (mode: number): string =>
  `read-only for this user (mode ${(mode & 0o777).toString(8).padStart(4, "0")})`

/**
 * Whether someone other than this user (and root) may rename or remove the entries of a directory: it belongs to
 * another user, or its group or others may write it without the sticky bit (which limits renames to an entry's owner,
 * as in `/tmp`). In such a directory a name this run just created may already stand for another file, so nothing is
 * done by that name that would follow a link put in its place (`chmod` follows links): only what acts on an open file.
 *
 * @example
 * ```ts
 * import { FileRules } from "@erp-client/kernel"
 *
 * console.log(FileRules.othersMayRename({ mode: 0o40777, uid: 0 }, { uid: 1000 })) // => true
 * console.log(FileRules.othersMayRename({ mode: 0o41777, uid: 0 }, { uid: 1000 })) // => false
 * console.log(FileRules.othersMayRename({ mode: 0o40755, uid: 1000 }, { uid: 1000 })) // => false
 * ```
 *
 * @since 0.1.0
 * @category Rules
 */
export const othersMayRename = (
  directory: { readonly mode: number; readonly uid: number | undefined },
  me: { readonly uid: number | undefined }
): boolean => {
  const owner = directory.uid === undefined || directory.uid === 0 || directory.uid === me.uid
  const sticky = (directory.mode & 0o1000) !== 0
  return !owner || (!sticky && (directory.mode & 0o022) !== 0)
}
