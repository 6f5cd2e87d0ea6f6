/** The surface dictionary of a snapshot: every unstemmed form with its document frequency, read by completion and spelling. */
export { gallopEnd, SurfaceDictionary, type DictionaryUpdate } from './dictionary.js';
