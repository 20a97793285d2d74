// Writes a small Lucene 8 index for the `lucene_index` example's tests, with Apache Lucene
// itself: several segments, compound and not, deletes, doc-values updates, and commit user data
// with non-ASCII text.
//
// Usage: java -cp <lucene-core.jar>:<classdir> WriteIndex SEED INDEX_DIR EXPECTED.txt
//            [DOCS_PER_SEGMENT WORDS_PER_DOC]
//
// The two optional numbers make a large index (for benchmarks): that many documents per
// segment, of that many words each, drawn from a vocabulary of random 8-letter words.
//
// EXPECTED.txt is Lucene's own reading of the commit it wrote (SegmentInfos.readLatestCommit),
// one fact per line, for the test to compare the example's output with:
//   generation N
//   segment NAME codec=CODEC docs=MAXDOC deleted=DELCOUNT compound=true|false
//   file NAME SIZE                  (every file of the commit, sorted, with its length)
//   userdata KEY=VALUE              (sorted by key; UTF-8)
//
// Randomness comes from java.util.Random, fixed by the Java spec, so a SEED gives the same
// documents on any JVM (file ids and timestamps differ from run to run).

import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.SegmentCommitInfo;
import org.apache.lucene.index.SegmentInfos;
import org.apache.lucene.index.Term;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;

public final class WriteIndex {

  static final String[] WORDS = {
    "lucene", "segment", "posting", "term", "index", "search", "async", "window", "buffer",
    "read", "ahead", "crc", "footer", "header", "compound", "delete", "update", "naïve",
    "größe", "ünïcödé", "日本語", "поиск", "λόγος", "☃"
  };

  public static void main(String[] args) throws Exception {
    if (args.length != 3 && args.length != 5) {
      System.err.println("usage: WriteIndex SEED INDEX_DIR EXPECTED.txt [DOCS_PER_SEGMENT WORDS_PER_DOC]");
      System.exit(2);
    }
    final boolean large = args.length == 5;
    final int docsPerSegment = large ? Integer.parseInt(args[3]) : 0;
    final int wordsPerDoc = large ? Integer.parseInt(args[4]) : 0;
    long seed = Long.parseLong(args[0]);
    Path indexDir = Paths.get(args[1]);
    Path expected = Paths.get(args[2]);
    Random random = new Random(seed);
    // The large index draws from 65536 random 8-letter words: a realistic term dictionary, and
    // text that compresses far less than the small index's.
    String[] vocabulary = new String[large ? 65536 : 0];
    for (int v = 0; v < vocabulary.length; v++) {
      StringBuilder word = new StringBuilder();
      for (int c = 0; c < 8; c++) {
        word.append((char) ('a' + random.nextInt(26)));
      }
      vocabulary[v] = word.toString();
    }

    try (Directory dir = FSDirectory.open(indexDir)) {
      IndexWriterConfig config = new IndexWriterConfig(new StandardAnalyzer());
      // Keep every flushed segment as it is: the test wants several, compound and not.
      config.setMergePolicy(NoMergePolicy.INSTANCE);
      config.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
      try (IndexWriter writer = new IndexWriter(dir, config)) {
        int id = 0;
        for (int segment = 0; segment < 4; segment++) {
          writer.getConfig().setUseCompoundFile(segment % 2 == 0);
          int docs = large ? docsPerSegment : 40 + random.nextInt(60);
          for (int i = 0; i < docs; i++, id++) {
            Document doc = new Document();
            doc.add(new StringField("id", Integer.toString(id), Field.Store.YES));
            StringBuilder body = new StringBuilder();
            int words = large ? wordsPerDoc : 5 + random.nextInt(40);
            for (int w = 0; w < words; w++) {
              if (large) {
                body.append(vocabulary[random.nextInt(vocabulary.length)]).append(' ');
              } else {
                body.append(WORDS[random.nextInt(WORDS.length)]).append(' ');
              }
            }
            doc.add(new TextField("body", body.toString(), Field.Store.YES));
            doc.add(new NumericDocValuesField("rank", random.nextInt(1000)));
            writer.addDocument(doc);
          }
          writer.flush();
        }
        // Deletes in two segments, and doc-values updates in two others.
        for (int i = 0; i < 5; i++) {
          writer.deleteDocuments(new Term("id", Integer.toString(random.nextInt(40))));
          writer.deleteDocuments(new Term("id", Integer.toString(100 + random.nextInt(30))));
        }
        for (int i = 0; i < 4; i++) {
          writer.updateNumericDocValue(
              new Term("id", Integer.toString(45 + random.nextInt(20))), "rank", 5000 + i);
          writer.updateNumericDocValue(
              new Term("id", Integer.toString(160 + random.nextInt(20))), "rank", 6000 + i);
        }
        Map<String, String> userData = new TreeMap<>();
        userData.put("seed", Long.toString(seed));
        userData.put("note", "héllo wörld ☃");
        userData.put("日本", "語 — ünïcödé");
        writer.setLiveCommitData(userData.entrySet());
        writer.commit();
      }

      SegmentInfos infos = SegmentInfos.readLatestCommit(dir);
      List<String> lines = new ArrayList<>();
      lines.add("generation " + infos.getGeneration());
      TreeSet<String> files = new TreeSet<>(infos.files(true));
      for (SegmentCommitInfo info : infos) {
        lines.add("segment " + info.info.name
            + " codec=" + info.info.getCodec().getName()
            + " docs=" + info.info.maxDoc()
            + " deleted=" + info.getDelCount()
            + " compound=" + info.info.getUseCompoundFile());
      }
      for (String file : files) {
        lines.add("file " + file + " " + dir.fileLength(file));
      }
      for (Map.Entry<String, String> entry : new TreeMap<>(infos.getUserData()).entrySet()) {
        lines.add("userdata " + entry.getKey() + "=" + entry.getValue());
      }
      try (Writer out = Files.newBufferedWriter(expected, StandardCharsets.UTF_8)) {
        for (String line : lines) {
          out.write(line);
          out.write('\n');
        }
      }
    }
  }
}
