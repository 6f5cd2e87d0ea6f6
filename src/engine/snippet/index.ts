/** Result snippets (CONTRACT §2): the window of a document's text that holds the most query terms. */
export { makeSnippet, Snippets } from './snippet.js';
