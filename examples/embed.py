"""ikigai in a Python program: one conversation, a tool approved by a function, resumed."""

from ikigai_core import App, Session


class Progress:
    """What the session tells us as it works (any object with these five methods)."""

    def request(self):
        pass

    def text(self, piece):
        pass

    def tool_start(self, call):
        print("tool:", call.name, call.arguments)

    def tool_end(self, call, envelope):
        print("done:", call.name, "ok" if envelope["tool_success"] else envelope["error_code"])

    def turn(self):
        from contextlib import nullcontext

        return nullcontext()


def approve(question):
    """Asked before a tool call the approval rules do not settle; None means no answer."""
    return "y" if question.startswith("Allow bash ") else "n"


app = App()  # this process's environment and directory, as `ikigai` would use them
session = Session.open(app, "openai", ask=approve, events=Progress())
reply = session.send("How many Python files are in this directory? Use bash.")
print("answer:", reply.text)
print("tokens:", session.usage.total)

again = Session.open(App(), "openai")  # later, or in another process
again.resume(session.id)  # the recorded conversation, its skills loaded again
print("answer:", again.send("And what did you run to count them?").text)
for notice in app.notices:  # what ikigai could not do; it printed nothing itself
    print("notice:", notice.message)
