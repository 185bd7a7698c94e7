package org.json;

/** org.json's JSONException is unchecked; Android's (Debian's libandroid-json-java) is checked, which
 * Cain-Java's code does not declare. This class comes first on the class path and replaces it. */
public class JSONException extends RuntimeException {
    public JSONException(String message) { super(message); }
    public JSONException(String message, Throwable cause) { super(message, cause); }
    public JSONException(Throwable cause) { super(cause); }
}
