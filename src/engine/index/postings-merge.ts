/**
 * The second half of a large merge's terms written in a thread of its own while the merging thread
 * writes the first (merge.ts `mergeIndex`, split at `splitTerm`). A term's dictionary entry holds byte
 * counts, not offsets (postings-writer.ts `TermsWriter`), so the two halves concatenate: the thread
 * writes its postings, its positions and its dictionary entries into one scratch file, the part, and
 * the merging thread appends each to its own once it has written its half. On the Wikipedia extract the
 * `.idx` is two thirds of a merge's work and the stored text's thread, beside it, the other third: one
 * thread for the `.idx` left the second core idle for half the merge.
 *
 * The part, a temporary's name (the index's recovery removes it after a crash), holds
 *
 *   postings · positions · termText · termMeta · JSON {terms, postings, positions, termText, termMeta} · u32 JSON bytes
 */
import { closeSync, fstatSync, openSync, rmSync } from 'node:fs';
import { threadModule } from '../../kernel/thread-module.js';
import { ByteWriter, utf8Decoder, utf8Encoder } from './bytes.js';
import type { TermsWriter } from './postings-writer.js';
import { copyFileRange, type ByteSink, type Spill } from './segment-file.js';
import { readAt, type DeletedBits } from './segment-reader.js';
import type { TermsPart } from './segment-writer.js';
import type { Steps } from './steps.js';
import { ThreadJob } from './thread-job.js';

export const POSTINGS_MERGE_THREAD = threadModule(import.meta.url, 'postings-merge-thread');

/** What the thread is given: the directory, the part's path, the sources in merge order, the first term it writes. */
export interface PostingsMergeInput {
  dir: string;
  part: string;
  sources: { name: string; deleted: DeletedBits | null }[];
  from: string;
}

interface PartLayout {
  terms: number;
  postings: number;
  positions: number;
  termText: number;
  termMeta: number;
}

/** Ends the part the thread wrote: its positions (written beside, into `positions`) after its postings, then the terms' entries and the layout. */
export function finishPart(part: Spill, positions: Spill, terms: TermsWriter): void {
  const layout: PartLayout = { terms: terms.count, postings: part.position, positions: positions.position, termText: terms.text.length, termMeta: terms.meta.length };
  positions.copyTo(part);
  part.bytes(terms.text.view());
  part.bytes(terms.meta.view());
  const json = utf8Encoder.encode(JSON.stringify(layout));
  const tail = new ByteWriter(json.length + 4);
  tail.bytes(json);
  tail.u32(json.length);
  part.bytes(tail.view());
  part.close();
}

/** A part as the merging thread reads it. */
class PartReader implements TermsPart {
  readonly terms: number;
  readonly termText: Uint8Array;
  readonly termMeta: Uint8Array;
  readonly #layout: PartLayout;

  constructor(private readonly fd: number, private readonly path: string, size: number) {
    const jsonBytes = readAt(fd, size - 4, 4, path).readUInt32LE(0);
    const l = (this.#layout = JSON.parse(utf8Decoder.decode(readAt(fd, size - 4 - jsonBytes, jsonBytes, path))) as PartLayout);
    this.terms = l.terms;
    this.termText = readAt(fd, l.postings + l.positions, l.termText, path);
    this.termMeta = readAt(fd, l.postings + l.positions + l.termText, l.termMeta, path);
  }

  copyPostings(to: ByteSink): void {
    copyFileRange(this.fd, this.path, 0, this.#layout.postings, to);
  }

  copyPositions(to: ByteSink): void {
    copyFileRange(this.fd, this.path, this.#layout.postings, this.#layout.positions, to);
  }
}

export class PostingsMerge {
  readonly #job: ThreadJob;
  readonly #path: string;
  #fd: number | undefined;

  /** Starts writing the part `input.part`. */
  constructor(input: PostingsMergeInput) {
    this.#path = input.part;
    this.#job = new ThreadJob(POSTINGS_MERGE_THREAD, input, [], `Merging the postings of the terms from ${JSON.stringify(input.from)} on into ${input.part}`);
  }

  /** Waits (as steps) for the thread, then opens its part; throws when the thread failed. */
  *part(): Steps<TermsPart> {
    yield* this.#job.waitSteps();
    this.#fd = openSync(this.#path, 'r');
    return new PartReader(this.#fd, this.#path, fstatSync(this.#fd).size);
  }

  /** Stops the thread if it runs, waits for it, and removes the part. Safe to call more than once. */
  async close(): Promise<void> {
    await this.#job.cancel(); // settles a job that ended, too
    if (this.#fd !== undefined) {
      closeSync(this.#fd);
      this.#fd = undefined;
    }
    rmSync(this.#path, { force: true });
  }
}
