-- Where each survey question's answers are (docs/warehouse.md, "Surveys and their views"): survey_responses no longer
-- has q_ columns (one column held the answers of different questions of different surveys); each survey's view has
-- a column per question of its own, typed from its answers. Rebuilt at every commit of the surveys stream. The q_
-- columns of warehouses made before are dropped by the loader after this migration (load/derived/survey-catalog.ts).

CREATE TABLE IF NOT EXISTS survey_question_columns (
  survey_id text NOT NULL,
  question_code text NOT NULL,
  view_name text NOT NULL,
  column_name text NOT NULL,
  answer_type text NOT NULL,
  answers BIGINT NOT NULL,
  answers_unparsed BIGINT NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (survey_id, question_code)
);
