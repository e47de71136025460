/* The observed-inputs audit hook in C (observe.py): the same events as its Python hook, at a
 * fraction of the cost. CPython calls every audit hook for every audited event, about 1,600 a
 * question (builtins.id from ADK's deep copies nearly all of them); calling a hook written in
 * Python costs ~1,760 instructions an event whatever it does (its event name made a string, its
 * arguments a tuple, the call): 2% of a question's CPU. A C hook is given the name as a C string
 * and returns at once for any event it does not want; only open, os.listdir, os.scandir, import
 * and sqlite3.connect reach Python, as ``handler(event, args)``.
 *
 * Built for the interpreter that runs the worker by ``python -m agent_eval_action.agent_worker.native``
 * (make install, the action's image); where it is not built, the worker uses its Python hook. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

static PyObject *handler = NULL;

static int
hook(const char *event, PyObject *args, void *data)
{
    (void)data;
    switch (event[0]) {
    case 'o':
        if (strcmp(event, "open") != 0 && strcmp(event, "os.listdir") != 0 && strcmp(event, "os.scandir") != 0) {
            return 0;
        }
        break;
    case 'i':
        if (strcmp(event, "import") != 0) {
            return 0;
        }
        break;
    case 's':
        if (strcmp(event, "sqlite3.connect") != 0) {
            return 0;
        }
        break;
    default:
        return 0;
    }
    /* Only the main interpreter's events: the handler belongs to it (a subinterpreter calling
     * it could crash), and the Python hook never saw other interpreters' events either. */
    if (handler == NULL || PyInterpreterState_Get() != PyInterpreterState_Main()) {
        return 0;
    }
    PyObject *name = PyUnicode_FromString(event);
    if (name == NULL) {
        return -1;
    }
    PyObject *result = PyObject_CallFunctionObjArgs(handler, name, args, NULL);
    Py_DECREF(name);
    if (result == NULL) {
        return -1;
    }
    Py_DECREF(result);
    return 0;
}

static PyObject *
install(PyObject *module, PyObject *callable)
{
    (void)module;
    if (handler != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the audit hook is installed already");
        return NULL;
    }
    if (!PyCallable_Check(callable)) {
        PyErr_SetString(PyExc_TypeError, "the handler must be callable");
        return NULL;
    }
    Py_INCREF(callable);
    handler = callable;
    if (PySys_AddAuditHook(hook, NULL) < 0) {
        Py_CLEAR(handler);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"install", install, METH_O, "install(handler): calls handler(event, args) for open, os.listdir, os.scandir, import and sqlite3.connect."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_audit_hook", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__audit_hook(void)
{
    return PyModule_Create(&module);
}
