-- Markers stable in full: once a marker names a sentence of a document in a conversation, it names
-- that sentence for the whole conversation. Each row is one sentence's marker (the sentence with
-- its white space normalized); a new sentence of the document gets the next number.
CREATE TABLE conversation_markers (
    conversation_id uuid NOT NULL REFERENCES conversations (id),
    marker          text NOT NULL,
    doc_id          uuid NOT NULL REFERENCES documents (id),
    sentence        text NOT NULL,
    first_turn      int  NOT NULL,
    PRIMARY KEY (conversation_id, marker)
);
-- md5 only keys the uniqueness of long sentences (a btree entry has a size limit).
CREATE UNIQUE INDEX conversation_markers_sentence_idx ON conversation_markers (conversation_id, doc_id, md5(sentence));
