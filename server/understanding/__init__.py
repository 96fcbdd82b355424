"""What a Chinese question asks and what a sentence states: a question understood once
(``Question``: its relations, whose constraints it touches, its safety topics, the kinds of fact
and times it asks for, what it asks), the words of the safety lookup and of the constraint
families, words and their parts of speech, the shapes an answer takes, and grounding (what
memory lacks, a sentence's unsupported words). The read path and the reply checks both take it;
it imports neither."""
