"""Redaction that keeps reports readable (memory_regression/redaction.py): a strong secret is redacted wherever
it occurs; a short password or a word only where it stands as the secret, so that node ids and words stay
comparable between runs."""

import pytest

from memory_regression.redaction import is_strong, Redactor


@pytest.mark.parametrize("secret, strong", [("test", False), ("hunter2", False), ("password", False),
                                            ("correcthorsebattery", False), ("Pa55-word", True), ("s3cr3t-pw", True)])
def test_a_secret_is_strong_when_long_and_not_a_word(secret, strong):
    assert is_strong(secret) is strong


def test_a_word_as_password_is_redacted_where_it_is_the_secret_and_nowhere_else():
    text = ("test_core.py::test_round_trip_keeps_role_content_and_order failed: AUTH test rejected "
            "(REDIS_PASSWORD=test, redis://default:test@127.0.0.1:6379/0, 'test')")
    assert Redactor(["test"]).text(text) == (
        "test_core.py::test_round_trip_keeps_role_content_and_order failed: AUTH *** rejected "
        "(REDIS_PASSWORD=***, redis://***@127.0.0.1:6379/0, '***')")


def test_a_strong_secret_is_redacted_even_inside_other_text():
    assert Redactor(["Pa55-word"]).text("tokenPa55-wordtail, b'Pa55-word'") == "token***tail, b'***'"


def test_secrets_shorter_than_four_characters_are_left_to_the_urls():
    assert Redactor(["pw"]).text("pw in redis://u:pw@h/0") == "pw in redis://***@h/0"
