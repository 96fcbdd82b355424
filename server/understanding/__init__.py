"""What a Chinese question asks and what a sentence states: words and their parts of speech,
the shapes an answer takes, and grounding (a fact question, what memory lacks, a sentence's
unsupported words). The read path and the reply checks both read it; it imports neither."""
