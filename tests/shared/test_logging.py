import json
import logging

from shared.logging_setup import configure_logging, current_job_id


def test_json_lines_carry_the_job_id(capsys):
    configure_logging("json", "INFO")
    token = current_job_id.set("abc123")
    try:
        logging.getLogger("transq.test").info("translated %d sentences", 3)
    finally:
        current_job_id.reset(token)
    logging.getLogger("transq.test").warning("no job here")
    lines = [json.loads(line) for line in capsys.readouterr().err.strip().splitlines()]
    assert lines[0]["message"] == "translated 3 sentences" and lines[0]["job_id"] == "abc123"
    assert lines[0]["level"] == "INFO" and "job_id" not in lines[1]
    configure_logging("text", "INFO")
