"""Running an operator's work on each of several objects: progress, and a problem with one object skips it
(reported afterwards) instead of stopping the others."""

from ..core.errors import VideError


def is_linked(ob):
    """Whether the object or its data comes from a library (and so cannot be changed here)."""
    return bool(ob.library or (ob.data and ob.data.library) or ob.override_library)


def for_each(context, targets, work):
    """Calls work(ob, progress) for each target, where progress(fraction) moves the progress bar within
    that target. Returns the results of the ones that worked, and "'name': problem" for the others."""
    wm = context.window_manager
    wm.progress_begin(0, len(targets))
    done, problems = [], []
    try:
        for i, ob in enumerate(targets):
            try:
                done.append(work(ob, lambda f, i=i: wm.progress_update(i + f)))
            except VideError as err:
                problems.append(f"'{ob.name}': {err}")
            wm.progress_update(i + 1)
    finally:
        wm.progress_end()
    return done, problems
