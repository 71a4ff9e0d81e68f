"""The poll every VIDE operator uses: greyed out with the reason why, shown in the button's tooltip."""


class SaysWhyNot:
    """poll() greys the operator out with the reason `problem(context)` gives (None: it can run)."""

    @classmethod
    def poll(cls, context):
        problem = cls.problem(context)
        if problem:
            cls.poll_message_set(problem)
        return problem is None
