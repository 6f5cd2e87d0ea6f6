/*
 * Lucene as a peer of the scale benchmark (bench/scale.ts), run with Debian's liblucene8-java.
 *
 *   java -cp <classes>:<lucene jars> LuceneScale [--all-words] build <dir>      documents on stdin as JSON lines:
 *                                                                 {"title": ..., "text": ...}
 *   java -cp <classes>:<lucene jars> LuceneScale [--all-words] serve <dir> <queries>   queries file: kind TAB query per line
 *
 * Build: one field "body" (title, newline, text) with EnglishAnalyzer (Porter stemming, English stop words
 * removed; with --all-words none removed, so that Lucene indexes every word as Quarry does and phrases of
 * common words have positions to match), frequencies and positions indexed, nothing stored but the document's number; BM25 k1 1.2,
 * b 0.75; a 256 MiB RAM buffer (Quarry's default write buffer); documents added from one thread, merges by
 * Lucene's default ConcurrentMergeScheduler, in threads of their own beside it (Quarry, beside its adding
 * thread, encodes full buffers, builds batches of documents and writes a large merge's stored text in
 * threads); forceMerge(1) at the end, so the index is one segment. Prints a JSON report.
 *
 * Serve: an MMapDirectory reader; each query parsed by the classic QueryParser with the same analyzer and OR as
 * the default operator (a quoted query is a PhraseQuery); top 20. A query is timed from its text to its hits'
 * stored ids, as the other engines are timed from their query text to their hits: parsed, searched, and
 * the id of each of the top 20 read from the stored fields. The search alone (the parsed query given to
 * the searcher, the hits' ids not read) is timed inside that too, as `searchMs`. Every query kind is timed
 * twice: with Lucene's default collector, which counts hits exactly only up to 1,000, and with an exact count
 * (totalHitsThreshold = Integer.MAX_VALUE). The same warm-up as the other engines: every query once,
 * untimed, before the timed passes. Prints a JSON report: wall and thread-CPU milliseconds, the search's
 * milliseconds and the total per query.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopScoreDocCollector;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.MMapDirectory;

public class LuceneScale {
  static final int TOP_K = 20;

  /** Whether every word is indexed (no stop words), as Quarry's analysis does. */
  static boolean allWords;

  static Analyzer analyzer() {
    return allWords ? new EnglishAnalyzer(CharArraySet.EMPTY_SET) : new EnglishAnalyzer();
  }

  public static void main(String[] args) throws Exception {
    allWords = args.length > 0 && args[0].equals("--all-words");
    if (allWords) args = java.util.Arrays.copyOfRange(args, 1, args.length);
    if (args.length >= 2 && args[0].equals("build")) build(Paths.get(args[1]));
    else if (args.length >= 3 && args[0].equals("serve")) serve(Paths.get(args[1]), Paths.get(args[2]));
    else throw new IllegalArgumentException("usage: LuceneScale build <dir> | serve <dir> <queries>");
  }

  /**
   * The string members of one JSON object on one line (the bench writes {"title","text"}): a small parser,
   * so that Lucene's build pays for reading JSON as Quarry's does. Other member types are not expected.
   */
  static Map<String, String> parseObject(String line) {
    Map<String, String> out = new LinkedHashMap<>();
    int[] at = { line.indexOf('{') + 1 };
    while (true) {
      skipSpace(line, at);
      if (line.charAt(at[0]) == '}') return out;
      String key = parseString(line, at);
      skipSpace(line, at);
      at[0]++; // ':'
      skipSpace(line, at);
      out.put(key, parseString(line, at));
      skipSpace(line, at);
      if (line.charAt(at[0]) == ',') at[0]++;
    }
  }

  static void skipSpace(String s, int[] at) {
    while (Character.isWhitespace(s.charAt(at[0]))) at[0]++;
  }

  static String parseString(String s, int[] at) {
    int i = at[0] + 1; // past the opening quote
    StringBuilder b = new StringBuilder();
    while (true) {
      char c = s.charAt(i++);
      if (c == '"') break;
      if (c != '\\') { b.append(c); continue; }
      char e = s.charAt(i++);
      switch (e) {
        case 'n': b.append('\n'); break;
        case 't': b.append('\t'); break;
        case 'r': b.append('\r'); break;
        case 'b': b.append('\b'); break;
        case 'f': b.append('\f'); break;
        case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
        default: b.append(e); // " \ /
      }
    }
    at[0] = i;
    return b.toString();
  }

  /** Peak and current resident set size of this process, in bytes (the kernel's VmHWM and VmRSS). */
  static long[] memory() throws Exception {
    long peak = 0, rss = 0;
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (line.startsWith("VmHWM:")) peak = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      if (line.startsWith("VmRSS:")) rss = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
    }
    return new long[] { peak, rss };
  }

  static double processCpuMs() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1e6;
  }

  static long directoryBytes(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.mapToLong(p -> p.toFile().length()).sum();
    }
  }

  static void build(Path dir) throws Exception {
    long t0 = System.nanoTime();
    IndexWriterConfig config = new IndexWriterConfig(analyzer());
    config.setSimilarity(new BM25Similarity(1.2f, 0.75f));
    config.setRAMBufferSizeMB(256);
    config.setUseCompoundFile(false);
    config.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
    long docs = 0;
    try (MMapDirectory directory = new MMapDirectory(dir); IndexWriter writer = new IndexWriter(directory, config)) {
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 20);
      Document doc = new Document();
      StoredField id = new StoredField("id", 0L);
      TextField body = new TextField("body", "", Field.Store.NO);
      doc.add(id);
      doc.add(body);
      for (String line; (line = in.readLine()) != null; ) {
        Map<String, String> d = parseObject(line);
        String title = d.getOrDefault("title", "");
        String text = d.getOrDefault("text", "");
        id.setLongValue(docs++);
        body.setStringValue(title.isEmpty() ? text : title + "\n" + text);
        writer.addDocument(doc);
      }
      writer.forceMerge(1);
      writer.commit();
    }
    long[] mem = memory();
    System.out.println("{\"docs\":" + docs + ",\"buildMs\":" + (System.nanoTime() - t0) / 1e6 + ",\"buildCpuMs\":" + processCpuMs()
        + ",\"peakRss\":" + mem[0] + ",\"bytes\":" + directoryBytes(dir) + ",\"segments\":1}");
  }

  static void serve(Path dir, Path queriesFile) throws Exception {
    List<String[]> queries = new ArrayList<>();
    for (String line : Files.readAllLines(queriesFile, StandardCharsets.UTF_8)) {
      int tab = line.indexOf('\t');
      if (tab > 0) queries.add(new String[] { line.substring(0, tab), line.substring(tab + 1) });
    }
    BooleanQuery.setMaxClauseCount(4096);
    Analyzer analyzer = analyzer();
    System.gc();
    long rssBase = memory()[1];
    long t0 = System.nanoTime();
    MMapDirectory directory = new MMapDirectory(dir);
    DirectoryReader reader = DirectoryReader.open(directory);
    IndexSearcher searcher = new IndexSearcher(reader);
    searcher.setSimilarity(new BM25Similarity(1.2f, 0.75f));
    double openMs = (System.nanoTime() - t0) / 1e6;
    System.gc();
    long rssOpen = memory()[1];
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    Map<String, List<String>> byKind = new LinkedHashMap<>();
    for (String[] q : queries) byKind.computeIfAbsent(q[0], k -> new ArrayList<>()).add(q[1]);
    Timed timed = new Timed();
    for (List<String> list : byKind.values()) for (String q : list) run(searcher, analyzer, q, 1000, timed);
    StringBuilder timings = new StringBuilder();
    for (int threshold : new int[] { 1000, Integer.MAX_VALUE }) {
      for (Map.Entry<String, List<String>> kind : byKind.entrySet()) {
        StringBuilder ms = new StringBuilder(), cpu = new StringBuilder(), searchMs = new StringBuilder(), totals = new StringBuilder();
        for (String q : kind.getValue()) {
          long c0 = threads.getCurrentThreadCpuTime();
          long s = System.nanoTime();
          run(searcher, analyzer, q, threshold, timed);
          double wall = (System.nanoTime() - s) / 1e6;
          double used = (threads.getCurrentThreadCpuTime() - c0) / 1e6;
          if (ms.length() > 0) { ms.append(','); cpu.append(','); searchMs.append(','); totals.append(','); }
          ms.append(wall);
          cpu.append(used);
          searchMs.append(timed.searchNanos / 1e6);
          totals.append(timed.total);
        }
        if (timings.length() > 0) timings.append(',');
        timings.append("{\"kind\":\"").append(kind.getKey()).append("\",\"exactTotal\":").append(threshold == Integer.MAX_VALUE)
            .append(",\"ms\":[").append(ms).append("],\"cpu\":[").append(cpu).append("],\"searchMs\":[").append(searchMs)
            .append("],\"totals\":[").append(totals).append("]}");
      }
    }
    if (timed.idSum == 42) System.err.println(); // the ids read are used, so that reading them is not optimized away
    System.gc();
    long rssAfter = memory()[1];
    reader.close();
    directory.close();
    System.out.println("{\"openMs\":" + openMs + ",\"rssBase\":" + rssBase + ",\"rssOpen\":" + rssOpen + ",\"rssAfter\":" + rssAfter
        + ",\"timings\":[" + timings + "]}");
  }

  /** The classic query parser, OR by default; a query the analyzer empties (stop words only) matches nothing. */
  static Query parse(Analyzer analyzer, String q) throws Exception {
    QueryParser parser = new QueryParser("body", analyzer);
    boolean phrase = q.length() > 1 && q.startsWith("\"") && q.endsWith("\"");
    String text = phrase ? "\"" + QueryParser.escape(q.substring(1, q.length() - 1)) + "\"" : QueryParser.escape(q);
    Query parsed = parser.parse(text);
    return parsed == null ? new MatchNoDocsQuery() : parsed;
  }

  /** What one query's run leaves: its total, the nanoseconds of its search alone, the sum of its hits' ids. */
  static final class Timed {
    long total;
    long searchNanos;
    long idSum;
  }

  static final Set<String> ID_FIELD = Set.of("id");

  /** One query from its text to its top hits' stored ids: parsed, searched (timed apart), the ids read. */
  static void run(IndexSearcher searcher, Analyzer analyzer, String text, int threshold, Timed out) throws Exception {
    Query q = parse(analyzer, text);
    long s = System.nanoTime();
    TopScoreDocCollector collector = TopScoreDocCollector.create(TOP_K, threshold);
    searcher.search(q, collector);
    TopDocs top = collector.topDocs();
    out.searchNanos = System.nanoTime() - s;
    out.total = top.totalHits.value;
    for (ScoreDoc hit : top.scoreDocs) out.idSum += searcher.doc(hit.doc, ID_FIELD).getField("id").numericValue().longValue();
  }
}
