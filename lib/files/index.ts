// Public API of the upload byte pipeline: parse, sniff, measure, name and record; no storage here. Its
// failures are UploadErrors, already the HTTP answers they become (lib/http/errors.ts).
export type { ImageDimensions } from './dimensions.ts';
export { measureImage } from './dimensions.ts';
export type { UploadErrorName } from './errors.ts';
export { fileTooLarge, isUploadError, UploadError } from './errors.ts';
export type { ParsedUploadFile, ParsedUploadForm, ParseUploadFormInput } from './multipart.ts';
export { FIELD_LIMITS, FILE_FIELD, MULTIPART_OVERHEAD_BYTES, parseUploadForm } from './multipart.ts';
export type { ParsedStorageKey } from './names.ts';
export {
  isoWithOffset,
  newFilenameSuffix,
  ORIGINAL_NAME_MAX_BYTES,
  parseStorageKey,
  sanitizeOriginalName,
  storageKey,
  storedFilename,
} from './names.ts';
export type {
  BuildUploadRecordInput,
  InspectUploadOptions,
  Permission,
  UploadFacts,
  UploadRecord,
} from './record.ts';
export {
  buildUploadRecord,
  inspectUpload,
  PERMISSIONS,
  parsePermission,
  sha256Hex,
  uploadRecordSchema,
} from './record.ts';
export type { ImageKind, SniffedType } from './sniff.ts';
export { IMAGE_KINDS, KIND_INFO, kindFromMimeType, normalizeAllowed, sniffImage } from './sniff.ts';
